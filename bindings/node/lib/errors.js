'use strict';
// One Error subclass per engine status code (include/sessiondb/status.h), so
// callers can `catch (e) { if (e instanceof NotFoundError) ... }` or test
// `e.code` ("not_found"), the same code the CLI's JSON errors and the HTTP
// API carry.

class SessiondbError extends Error {
  constructor(message, code = 'internal') {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
class InvalidArgumentError extends SessiondbError {}
class NotFoundError extends SessiondbError {}
class AlreadyExistsError extends SessiondbError {}
class FailedPreconditionError extends SessiondbError {}
class BusyError extends SessiondbError {}
class CorruptionError extends SessiondbError {}
class IoError extends SessiondbError {}
class InternalError extends SessiondbError {}

const byCode = {
  invalid_argument: InvalidArgumentError,
  not_found: NotFoundError,
  already_exists: AlreadyExistsError,
  failed_precondition: FailedPreconditionError,
  busy: BusyError,
  corruption: CorruptionError,
  io_error: IoError,
  internal: InternalError,
};

// The subclass for an error the addon raised (it carries `code`); anything
// else (a bug of ours, out of memory) is passed through unchanged.
function fromNative(error) {
  const Class = error && byCode[error.code];
  if (!Class) return error;
  const converted = new Class(error.message, error.code);
  if (error.stack) converted.stack = converted.name + ': ' + error.message + '\n' +
      String(error.stack).split('\n').slice(1).join('\n');
  return converted;
}

function invalid(message) {
  return new InvalidArgumentError(message, 'invalid_argument');
}

module.exports = {
  SessiondbError, InvalidArgumentError, NotFoundError, AlreadyExistsError,
  FailedPreconditionError, BusyError, CorruptionError, IoError, InternalError,
  fromNative, invalid,
};
