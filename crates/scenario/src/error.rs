//! Why a scenario cannot be loaded: [`ScenarioError`] (with the file) and [`FieldError`] (one
//! field and what is wrong with it, before the file is known), the one shape every check in
//! this crate reports in.

use netsim::ConfigError;

/// Why a scenario cannot be loaded. Every message starts with the file (origin) and, where
/// there is one, the field path (`path.forward.rate`, `flow[0].download`).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{origin}: cannot read: {source}")]
    Read {
        /// The file.
        origin: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not UTF-8 text (TOML files must be), e.g. cut inside a character or
    /// saved in another encoding.
    #[error("{origin}: not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column}")]
    NotUtf8 {
        /// The file.
        origin: String,
        /// Line of the first invalid byte, from 1.
        line: usize,
        /// Column (characters) of the first invalid byte, from 1.
        column: usize,
        /// The first invalid byte.
        byte: u8,
    },
    /// The text is not valid TOML.
    #[error("{origin}: {message}")]
    Syntax {
        /// The file.
        origin: String,
        /// The TOML parser's message, with line and column.
        message: String,
    },
    /// A `key=value` override could not be applied.
    #[error("{origin}: override {assignment:?}: {problem}")]
    Override {
        /// The file the override was applied to.
        origin: String,
        /// The override as given.
        assignment: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A field has a wrong type, unit or value, is unknown, or is missing.
    #[error("{origin}: {}{problem}", field_prefix(.field))]
    Invalid {
        /// The file.
        origin: String,
        /// Dotted path of the field (`flow[0].download`); empty for the top level.
        field: String,
        /// What is wrong.
        problem: String,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

impl ScenarioError {
    /// The field at fault, for an [`ScenarioError::Invalid`] error.
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// What is wrong with one field of a scenario: the checks (controllers, applications, links,
/// flows) report this, and loading attaches the file to make a [`ScenarioError::Invalid`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    /// Dotted path of the field (`flow[0].cc`, `flow[0].cc_params.initial_window`,
    /// `path.forward.rate`), or a flag such as `--cc` when the value came from the command line.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FieldError {
    /// The error for `field` with `problem`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// netsim names the link field it rejects (`path.forward.rate`); its message is kept without
/// the repeated field.
impl From<ConfigError> for FieldError {
    fn from(error: ConfigError) -> Self {
        let field = match &error {
            ConfigError::ZeroRate { field }
            | ConfigError::Probability { field, .. }
            | ConfigError::QueueTooSmall { field, .. }
            | ConfigError::Invalid { field, .. } => field.clone(),
        };
        let message = error.to_string();
        let text = message
            .strip_prefix(&format!("{field}: "))
            .unwrap_or(&message)
            .to_owned();
        FieldError::new(field, text)
    }
}

impl ScenarioError {
    /// Attaches the file to a field's problem.
    pub(crate) fn invalid(origin: &str, error: FieldError) -> ScenarioError {
        ScenarioError::Invalid {
            origin: origin.to_owned(),
            field: error.field,
            problem: error.problem,
        }
    }
}
