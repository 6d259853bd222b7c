'use strict';
// sessiondb for Node (docs/node.md): the Store, its errors and the part
// helpers. The drop-ins for other libraries are subpaths of the package:
// sessiondb/agents (@openai/agents), sessiondb/langgraph (LangGraph.js),
// sessiondb/ai (the Vercel AI SDK).
//
// One `exports.name =` line each: that is the form Node's ES module loader
// reads a CommonJS module's names from, so `import { Store } from "sessiondb"`
// works as `require` does.
const errors = require('./errors');
const parts = require('./parts');

exports.Store = require('./store').Store;
exports.SessiondbError = errors.SessiondbError;
exports.InvalidArgumentError = errors.InvalidArgumentError;
exports.NotFoundError = errors.NotFoundError;
exports.AlreadyExistsError = errors.AlreadyExistsError;
exports.FailedPreconditionError = errors.FailedPreconditionError;
exports.BusyError = errors.BusyError;
exports.CorruptionError = errors.CorruptionError;
exports.IoError = errors.IoError;
exports.InternalError = errors.InternalError;
exports.text = parts.text;
exports.reasoning = parts.reasoning;
exports.image = parts.image;
exports.file = parts.file;
exports.link = parts.link;
exports.toolCall = parts.toolCall;
exports.toolResult = parts.toolResult;
