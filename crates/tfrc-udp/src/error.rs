//! The errors a session can end with: an option out of range, or a socket or timer failing.

use std::fmt;
use std::io;

use crate::options::OptionError;

/// Why a sender or receiver could not be made or stopped running.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// An option (or the TFRC configuration) is out of range.
    Option(OptionError),
    /// A system call failed; `context` says which step (binding, polling, ...).
    Io {
        /// The step that failed.
        context: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
}

impl TransportError {
    /// Wraps `source` with the step it came from.
    pub(crate) fn io(context: &'static str) -> impl FnOnce(io::Error) -> TransportError {
        move |source| TransportError::Io { context, source }
    }

    /// The same error again (an `io::Error` cannot be cloned: its kind and message are kept),
    /// for a session closed twice.
    pub(crate) fn duplicate(&self) -> TransportError {
        match self {
            TransportError::Option(err) => TransportError::Option(err.clone()),
            TransportError::Io { context, source } => TransportError::Io {
                context,
                source: io::Error::new(source.kind(), source.to_string()),
            },
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Option(err) => err.fmt(f),
            TransportError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TransportError::Option(err) => Some(err),
            TransportError::Io { source, .. } => Some(source),
        }
    }
}

impl From<OptionError> for TransportError {
    fn from(err: OptionError) -> Self {
        TransportError::Option(err)
    }
}
