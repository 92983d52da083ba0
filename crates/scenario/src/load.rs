//! Scenario files: one TOML file per experiment, turned into a validated [`Scenario`].
//!
//! Scenarios are data, not code: a file states the bottleneck in both directions, the transport
//! settings and the flows, with units in the strings (`"10Mbit"`, `"250ms"`, `"1%"`, `"100MB"`,
//! `"1bdp"`; see [`crate::units`]). The format is documented for users in
//! `docs/scenario-format.md`; keep the two in step.
//!
//! Loading happens here, in four steps, each reporting errors that name the file and the field:
//! 1. the text is parsed as TOML ([`ScenarioError::Syntax`]);
//! 2. command-line overrides (`key=value`, the CLI's `--set`) are written into the TOML tree
//!    (`overrides`, [`ScenarioError::Override`]);
//! 3. the tree is deserialized into the private raw structs of `raw` (`deny_unknown_fields`,
//!    the unit parsers), so a misspelt key or a wrong unit is caught with its path
//!    ([`ScenarioError::Invalid`]);
//! 4. the raw structs are checked as a whole (`validate`: durations against the run length,
//!    flow names after `count` expansion, links through [`netsim::LinkConfig::validate`]) and
//!    converted into the model ([`Scenario`]).

use std::path::Path;

use crate::error::ScenarioError;
use crate::model::Scenario;
use crate::overrides::apply_override;
use crate::raw::RawScenario;

#[cfg(test)]
mod tests;

/// Reads a scenario file's text for [`Scenario::from_toml_str`], for a caller that needs the
/// text too (to load it again with other overrides): errors name the file, and a file that is
/// not UTF-8 the line and column of its first bad byte ([`ScenarioError::NotUtf8`]), which
/// `std::fs::read_to_string` does not.
pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ScenarioError::Read {
        origin: origin.clone(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Characters before the bad byte on its line (the prefix is valid UTF-8).
        let column = String::from_utf8_lossy(&valid[line_start..])
            .chars()
            .count()
            + 1;
        ScenarioError::NotUtf8 {
            origin,
            line,
            column,
            byte: e.as_bytes()[valid.len()],
        }
    })
}

impl Scenario {
    /// Reads and validates a scenario file, after applying `overrides` (each `key=value`, see
    /// [`Scenario::from_toml_str`]).
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let text = read_text(path)?;
        Self::from_toml_str(&text, &path.display().to_string(), overrides)
    }

    /// Parses and validates scenario text; `origin` names it in errors.
    ///
    /// Each override is `key=value`: a dotted key into the TOML tree (`path.forward.rate`,
    /// `duration`, `flow.0.cc` for one array element, `flow.cc` for every element) and a value
    /// read as a TOML value if it parses as one (`60`, `true`, `{ rtt0 = "25ms" }`, `"x"`),
    /// else taken as a string (`20Mbit`, `cubic`). Missing tables on the way are created;
    /// unknown keys are rejected when the tree is deserialized.
    pub fn from_toml_str(
        text: &str,
        origin: &str,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        let mut table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ScenarioError::Syntax {
                    origin: origin.to_owned(),
                    message: e.to_string().trim_end().to_owned(),
                })?;
        // Tables the overrides created on their way, by assignment.
        let mut created: Vec<(&String, String)> = Vec::new();
        for assignment in overrides {
            let mut made = Vec::new();
            apply_override(&mut table, assignment, &mut made).map_err(|problem| {
                ScenarioError::Override {
                    origin: origin.to_owned(),
                    assignment: assignment.clone(),
                    problem,
                }
            })?;
            created.extend(made.into_iter().map(|path| (assignment, path)));
        }
        let raw: RawScenario = serde_path_to_error::deserialize(table).map_err(|e| {
            let field = e.path().to_string();
            // `message()` leaves out toml's own "in `key`" suffix; the path says it.
            let problem = e.into_inner().message().trim_end().to_owned();
            // A table an override created where the file has something else (e.g.
            // `flow.app.rate=…` on a flow without apps): the override is at fault, not the file.
            if let Some((assignment, path)) = created.iter().find(|(_, path)| *path == field) {
                return ScenarioError::Override {
                    origin: origin.to_owned(),
                    assignment: (*assignment).clone(),
                    problem: format!(
                        "`{path}` does not exist, and a table created for it is wrong there: {problem}"
                    ),
                };
            }
            ScenarioError::Invalid {
                origin: origin.to_owned(),
                field: if field == "." { String::new() } else { field },
                problem,
            }
        })?;
        raw.validate()
            .map_err(|error| ScenarioError::invalid(origin, error))
    }
}
