//! Congestion controllers by name, with their scenario parameters (`cc`, `cc_params`).

use std::collections::BTreeMap;
use std::sync::Arc;

use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};

use crate::units;

/// Controllers the lab can run.
pub const KNOWN_CONTROLLERS: &[&str] = &["newreno", "cubic", "bbr"];

/// A controller name or parameter the lab cannot honour.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct ControllerError {
    /// Scenario field (`flow[0].cc`, `flow[0].cc_params.initial_window`, or `--cc`).
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

/// A ready-to-use factory and the label reports show for it.
pub struct Controller {
    /// Label for tables and plots (the name as given).
    pub label: String,
    /// The factory both endpoints use.
    pub factory: Arc<dyn ControllerFactory + Send + Sync>,
}

fn size_param(field: &str, value: &toml::Value) -> Result<u64, ControllerError> {
    let problem = |p: String| ControllerError {
        field: field.to_owned(),
        problem: p,
    };
    match value {
        toml::Value::String(s) => units::parse_size(s).map_err(|e| problem(e.to_string())),
        toml::Value::Integer(n) if *n > 0 => Ok(*n as u64),
        other => Err(problem(format!(
            "expected a size such as \"15KB\", got {other}"
        ))),
    }
}

fn float_param(field: &str, value: &toml::Value) -> Result<f64, ControllerError> {
    match value {
        toml::Value::Float(f) if (0.0..=1.0).contains(f) => Ok(*f),
        other => Err(ControllerError {
            field: field.to_owned(),
            problem: format!("expected a number between 0 and 1, got {other}"),
        }),
    }
}

/// Applies the one parameter Cubic and BBR take in quinn: `initial_window`.
fn only_initial_window(
    params: &BTreeMap<String, toml::Value>,
    param_field: &dyn Fn(&str) -> String,
    unknown: &dyn Fn(&str, &str) -> ControllerError,
    mut set: impl FnMut(u64),
) -> Result<(), ControllerError> {
    for (key, value) in params {
        match key.as_str() {
            "initial_window" => set(size_param(&param_field(key), value)?),
            _ => return Err(unknown(key, "initial_window")),
        }
    }
    Ok(())
}

/// Builds controller `name` with `params`; `field` is where the name came from (for errors).
pub fn build(
    name: &str,
    params: &BTreeMap<String, toml::Value>,
    field: &str,
) -> Result<Controller, ControllerError> {
    let param_field = |key: &str| format!("{field}_params.{key}");
    let unknown = |key: &str, allowed: &str| ControllerError {
        field: param_field(key),
        problem: format!("unknown parameter for {name}; allowed: {allowed}"),
    };
    let factory: Arc<dyn ControllerFactory + Send + Sync> = match name {
        "newreno" => {
            let mut config = NewRenoConfig::default();
            for (key, value) in params {
                match key.as_str() {
                    "initial_window" => {
                        config.initial_window(size_param(&param_field(key), value)?);
                    }
                    "loss_reduction_factor" => {
                        config.loss_reduction_factor(float_param(&param_field(key), value)? as f32);
                    }
                    _ => {
                        return Err(unknown(key, "initial_window, loss_reduction_factor"));
                    }
                }
            }
            Arc::new(config)
        }
        "cubic" => {
            let mut config = CubicConfig::default();
            only_initial_window(params, &param_field, &unknown, |w| {
                config.initial_window(w);
            })?;
            Arc::new(config)
        }
        "bbr" => {
            let mut config = BbrConfig::default();
            only_initial_window(params, &param_field, &unknown, |w| {
                config.initial_window(w);
            })?;
            Arc::new(config)
        }
        "hybla" => {
            return Err(ControllerError {
                field: field.to_owned(),
                problem: "hybla is not built yet (issue 3); available: newreno, cubic, bbr".into(),
            });
        }
        other => {
            return Err(ControllerError {
                field: field.to_owned(),
                problem: format!(
                    "unknown congestion controller {other:?}; available: {}",
                    KNOWN_CONTROLLERS.join(", ")
                ),
            });
        }
    };
    Ok(Controller {
        label: name.to_owned(),
        factory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_controllers_build_with_and_without_params() {
        for name in KNOWN_CONTROLLERS {
            assert!(
                build(name, &BTreeMap::new(), "flow[0].cc").is_ok(),
                "{name}"
            );
            let params = BTreeMap::from([(
                "initial_window".to_owned(),
                toml::Value::String("30KB".into()),
            )]);
            assert!(build(name, &params, "flow[0].cc").is_ok(), "{name}");
        }
    }

    #[test]
    fn unknown_names_and_params_name_the_field() {
        let err = build("vegas", &BTreeMap::new(), "--cc").err().unwrap();
        assert!(
            err.to_string()
                .starts_with("--cc: unknown congestion controller"),
            "{err}"
        );
        let params = BTreeMap::from([("rtt0".to_owned(), toml::Value::String("25ms".into()))]);
        let err = build("cubic", &params, "flow[1].cc").err().unwrap();
        assert!(err.to_string().contains("flow[1].cc_params.rtt0"), "{err}");
        let params = BTreeMap::from([("initial_window".to_owned(), toml::Value::Boolean(true))]);
        let err = build("newreno", &params, "flow[0].cc").err().unwrap();
        assert!(err.to_string().contains("expected a size"), "{err}");
    }
}
