'use strict';
// sessiondb for Node (docs/node.md): the Store, its errors and the part
// helpers. The drop-ins for other libraries are subpaths of the package:
// sessiondb/agents (@openai/agents), sessiondb/langgraph (LangGraph.js),
// sessiondb/ai (the Vercel AI SDK).
const errors = require('./errors');
const parts = require('./parts');
const { Store } = require('./store');

module.exports = {
  Store,
  SessiondbError: errors.SessiondbError,
  InvalidArgumentError: errors.InvalidArgumentError,
  NotFoundError: errors.NotFoundError,
  AlreadyExistsError: errors.AlreadyExistsError,
  FailedPreconditionError: errors.FailedPreconditionError,
  BusyError: errors.BusyError,
  CorruptionError: errors.CorruptionError,
  IoError: errors.IoError,
  InternalError: errors.InternalError,
  text: parts.text,
  reasoning: parts.reasoning,
  image: parts.image,
  file: parts.file,
  link: parts.link,
  toolCall: parts.toolCall,
  toolResult: parts.toolResult,
};
