#include "blob/writer_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace sessiondb::blob {
namespace {

TEST(WriterThreads, AThreadWhoseJobIsDoneTakesTheNextJob) {
  WriterThreads threads;
  std::promise<std::thread::id> first;
  ASSERT_TRUE(threads.Run([&] { first.set_value(std::this_thread::get_id()); }));
  const std::thread::id first_id = first.get_future().get();
  while (threads.waiting() == 0) std::this_thread::yield();  // back in its loop
  std::promise<std::thread::id> second;
  ASSERT_TRUE(threads.Run([&] { second.set_value(std::this_thread::get_id()); }));
  EXPECT_EQ(second.get_future().get(), first_id);
  EXPECT_EQ(threads.threads(), 1u);
}

TEST(WriterThreads, AJobIsNeverQueuedBehindABusyThread) {
  // The first job waits for the second: queued behind it, neither would end.
  WriterThreads threads;
  std::promise<void> second_ran;
  std::shared_future<void> second_done = second_ran.get_future().share();
  std::atomic<bool> first_done{false};
  // Bounded waits, so that a keeper that queued would fail, not hang.
  ASSERT_TRUE(threads.Run([&] {
    first_done = second_done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  }));
  ASSERT_TRUE(threads.Run([&] { second_ran.set_value(); }));
  ASSERT_EQ(second_done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(threads.threads(), 2u);
  for (int i = 0; i < 2000 && !first_done; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(first_done);
}

TEST(WriterThreads, EndingWaitsForTheJobsRunning) {
  std::atomic<bool> finished{false};
  std::promise<void> started;
  {
    WriterThreads threads;
    ASSERT_TRUE(threads.Run([&] {
      started.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      finished = true;
    }));
    started.get_future().wait();
  }
  EXPECT_TRUE(finished);
}

TEST(WriterThreads, ManyJobsInTurnStartOneThread) {
  WriterThreads threads;
  int ran = 0;
  for (int i = 0; i < 50; ++i) {
    std::promise<void> done;
    ASSERT_TRUE(threads.Run([&] {
      ++ran;
      done.set_value();
    }));
    done.get_future().wait();
    // Wait until the thread is back in its loop, so the next Run finds it.
    while (threads.waiting() == 0) std::this_thread::yield();
  }
  EXPECT_EQ(ran, 50);
  EXPECT_EQ(threads.threads(), 1u);
}

}  // namespace
}  // namespace sessiondb::blob
