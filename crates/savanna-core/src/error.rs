//! Errors. `Error::Input` is anything the user can fix (a malformed scenario, an impossible
//! parameter, a missing file): it names the field and what is allowed, and front ends map it
//! to exit code 2. `Error::Io` and `Error::Internal` are everything else.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// Bad input: `field` is a dotted path into the scenario (e.g. `queue.red.min_th`),
    /// `msg` says what was wrong and what is allowed.
    Input { field: String, msg: String },
    /// Could not read or write a file.
    Io { path: String, msg: String },
    /// A bug: an invariant of the simulator did not hold.
    Internal(String),
    /// The front end asked the run to stop (`Cancel`); nothing was written.
    Interrupted,
}

/// A flag a front end sets (e.g. on Ctrl-C) to stop a run: the event loop looks at it every
/// few tens of thousands of events and then returns `Error::Interrupted`.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);

impl Cancel {
    /// A flag shared with whoever holds a clone.
    pub fn new() -> Self {
        Cancel(Some(Default::default()))
    }
    pub fn set(&self) {
        if let Some(f) = &self.0 {
            f.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Error {
    pub fn input(field: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Input { field: field.into(), msg: msg.into() }
    }
    pub fn io(path: impl Into<String>, err: impl fmt::Display) -> Self {
        Error::Io { path: path.into(), msg: err.to_string() }
    }
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Input { .. } | Error::Io { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input { field, msg } if field.is_empty() => write!(f, "{msg}"),
            Error::Input { field, msg } => write!(f, "{field}: {msg}"),
            Error::Io { path, msg } => write!(f, "{path}: {msg}"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
