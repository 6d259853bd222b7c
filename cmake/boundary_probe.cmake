# Preprocesses probe sources with the include path of one module target, to
# show that the module boundaries of CMakeLists.txt hold (tests/boundary/).
#
# Run in script mode by CTest:
#   cmake -DCXX=<compiler> -DSTD=<-std=c++23> -DINCLUDES=<file of include folders>
#         -DSOURCE_DIR=<repository> -DFOLDERS=<folders under src/, comma-separated>
#         -DEXPECT=forbidden|allowed -DWORK=<scratch folder> -P boundary_probe.cmake
#
# EXPECT=forbidden: every header directly in each of FOLDERS is included by a
#   probe of its own, and each probe must fail because that very header is
#   not found. A failure for any other reason fails the test.
# EXPECT=allowed: one probe includes every header of FOLDERS and must succeed,
#   so a target whose include path is broken cannot make the forbidden probes
#   pass.
# The probes are only preprocessed (-E): a boundary is a matter of which
# headers can be found, and that keeps each test well under a second.
cmake_minimum_required(VERSION 3.25)

foreach(var CXX STD INCLUDES SOURCE_DIR FOLDERS EXPECT WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "boundary_probe.cmake needs -D${var}=...")
  endif()
endforeach()

string(REPLACE "," ";" FOLDERS "${FOLDERS}")
file(STRINGS "${INCLUDES}" include_dirs)
if(NOT include_dirs)
  message(FATAL_ERROR "${INCLUDES} names no include folder")
endif()
set(flags ${STD} -E -o /dev/null)
foreach(dir IN LISTS include_dirs)
  list(APPEND flags "-I${dir}")
endforeach()

# The headers of FOLDERS as an #include writes them ("store/sqlite/sqlite_db.h").
set(headers "")
foreach(folder IN LISTS FOLDERS)
  file(GLOB found RELATIVE "${SOURCE_DIR}/src" "${SOURCE_DIR}/src/${folder}/*.h")
  if(NOT found)
    message(FATAL_ERROR "src/${folder} holds no header to probe")
  endif()
  list(APPEND headers ${found})
endforeach()
list(SORT headers)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

if(EXPECT STREQUAL "allowed")
  set(text "")
  foreach(header IN LISTS headers)
    string(APPEND text "#include \"${header}\"\n")
  endforeach()
  file(WRITE "${WORK}/allowed.cc" "${text}")
  execute_process(COMMAND ${CXX} ${flags} "${WORK}/allowed.cc"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "headers this target may include are not all found on its include path:\n${err}")
  endif()
  list(LENGTH headers count)
  message(STATUS "${count} allowed headers are found")
elseif(EXPECT STREQUAL "forbidden")
  set(reachable "")
  foreach(header IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${header}" name)
    file(WRITE "${WORK}/${name}.cc" "#include \"${header}\"\n")
    execute_process(COMMAND ${CXX} ${flags} "${WORK}/${name}.cc"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REGEX REPLACE "([.+])" "\\\\\\1" quoted "${header}")
    if(rc EQUAL 0)
      list(APPEND reachable "${header} (it is found)")
    elseif(NOT err MATCHES "${quoted}'?:? (No such file or directory|file not found)")
      list(APPEND reachable "${header} (it fails for another reason:\n${err})")
    endif()
  endforeach()
  if(reachable)
    list(JOIN reachable "\n  " text)
    message(FATAL_ERROR "forbidden headers are reachable:\n  ${text}")
  endif()
  list(LENGTH headers count)
  message(STATUS "${count} forbidden headers are out of reach")
else()
  message(FATAL_ERROR "EXPECT is 'forbidden' or 'allowed', not '${EXPECT}'")
endif()
