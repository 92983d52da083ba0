//! Congestion controllers by name, with their scenario parameters (`cc`, `cc_params`).

use std::collections::BTreeMap;
use std::sync::Arc;

use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};

use crate::units;

/// Controllers the lab can run.
pub const KNOWN_CONTROLLERS: &[&str] = &["newreno", "cubic", "bbr", "hybla"];

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

fn string_param<'a>(field: &str, value: &'a toml::Value) -> Result<&'a str, ControllerError> {
    value.as_str().ok_or_else(|| ControllerError {
        field: field.to_owned(),
        problem: format!("expected a string, got {value}"),
    })
}

fn unit_param<T>(
    field: &str,
    value: &toml::Value,
    parse: fn(&str) -> Result<T, units::UnitError>,
) -> Result<T, ControllerError> {
    parse(string_param(field, value)?).map_err(|e| ControllerError {
        field: field.to_owned(),
        problem: e.to_string(),
    })
}

/// Hybla's parameters: `rtt0` (duration), `initial_ssthresh` ("auto": the declared path BDP
/// when the run knows its path, else measured; "estimate": measured only; "none"; a size; or
/// "32seg" for γ segments × ρ), `growth` ("pipe-aware" or "seed"), `initial_window` (size),
/// `loss_reduction_factor`, `base_rtt_window` (duration).
fn hybla_config(
    params: &BTreeMap<String, toml::Value>,
    param_field: &dyn Fn(&str) -> String,
    mut declared_bdp_bytes: Option<u64>,
) -> Result<hybla::HyblaConfig, ControllerError> {
    use hybla::{Growth, InitialSsthresh};
    let mut config = hybla::HyblaConfig::default();
    let mut growth = Growth::PipeAware;
    for (key, value) in params {
        let field = param_field(key);
        let invalid = |problem: String| ControllerError {
            field: field.clone(),
            problem,
        };
        match key.as_str() {
            "rtt0" => {
                let rtt0 = unit_param(&field, value, units::parse_duration)?;
                if rtt0.is_zero() {
                    return Err(invalid("RTT0 must be greater than zero".into()));
                }
                config.rtt0(rtt0);
            }
            "initial_ssthresh" => {
                let text = string_param(&field, value)?;
                let choice = match text {
                    "auto" => InitialSsthresh::Estimate,
                    "estimate" => {
                        declared_bdp_bytes = None;
                        InitialSsthresh::Estimate
                    }
                    "none" | "infinite" => InitialSsthresh::Infinite,
                    _ => match text.strip_suffix("seg") {
                        Some(n) => InitialSsthresh::Segments(
                            n.trim()
                                .parse::<f64>()
                                .ok()
                                .filter(|g| g.is_finite() && *g >= 2.0)
                                .ok_or_else(|| {
                                    invalid(format!("{text:?}: expected e.g. \"32seg\" (γ ≥ 2)"))
                                })?,
                        ),
                        None => InitialSsthresh::Bytes(units::parse_size(text).map_err(|e| {
                            invalid(format!("{e}; or \"auto\", \"none\", \"32seg\""))
                        })?),
                    },
                };
                config.initial_ssthresh(choice);
            }
            "growth" => {
                growth = match string_param(&field, value)? {
                    "pipe-aware" => Growth::PipeAware,
                    "seed" | "plain" => Growth::Seed,
                    other => {
                        return Err(invalid(format!(
                            "{other:?}: expected \"pipe-aware\" (default) or \"seed\""
                        )));
                    }
                };
            }
            "initial_window" => {
                config.initial_window(size_param(&field, value)?);
            }
            "loss_reduction_factor" => {
                config.loss_reduction_factor(float_param(&field, value)?);
            }
            "base_rtt_window" => {
                let window = unit_param(&field, value, units::parse_duration)?;
                if window.is_zero() {
                    return Err(invalid("must be greater than zero".into()));
                }
                config.base_rtt_window(window);
            }
            _ => {
                return Err(invalid(
                    "unknown parameter for hybla; allowed: rtt0, initial_ssthresh, growth, initial_window, loss_reduction_factor, base_rtt_window".into(),
                ));
            }
        }
    }
    config.growth(growth);
    if let Some(bdp) = declared_bdp_bytes {
        config.declared_bdp(bdp);
    }
    Ok(config)
}

/// Builds controller `name` with `params`; `field` is where the name came from (for errors).
/// `declared_bdp_bytes` is the path's BDP where the caller knows the path (Hybla's start-up
/// target unless `initial_ssthresh` says otherwise).
pub fn build(
    name: &str,
    params: &BTreeMap<String, toml::Value>,
    field: &str,
    declared_bdp_bytes: Option<u64>,
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
        "hybla" => Arc::new(hybla_config(params, &param_field, declared_bdp_bytes)?),
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
                build(name, &BTreeMap::new(), "flow[0].cc", None).is_ok(),
                "{name}"
            );
            let params = BTreeMap::from([(
                "initial_window".to_owned(),
                toml::Value::String("30KB".into()),
            )]);
            assert!(build(name, &params, "flow[0].cc", None).is_ok(), "{name}");
        }
    }

    fn hybla_with(key: &str, value: toml::Value) -> Result<Controller, ControllerError> {
        build(
            "hybla",
            &BTreeMap::from([(key.to_owned(), value)]),
            "flow[0].cc",
            None,
        )
    }

    #[test]
    fn hybla_parameters_parse_and_reject_nonsense() {
        let s = |v: &str| toml::Value::String(v.into());
        for (key, value) in [
            ("rtt0", s("25ms")),
            ("initial_ssthresh", s("auto")),
            ("initial_ssthresh", s("none")),
            ("initial_ssthresh", s("750KB")),
            ("initial_ssthresh", s("32seg")),
            ("growth", s("seed")),
            ("base_rtt_window", s("10s")),
        ] {
            assert!(hybla_with(key, value).is_ok(), "{key}");
        }
        for (key, value, needle) in [
            ("rtt0", s("0ms"), "greater than zero"),
            ("rtt0", toml::Value::Integer(25), "expected a string"),
            ("initial_ssthresh", s("lots"), "auto"),
            ("initial_ssthresh", s("1seg"), "γ ≥ 2"),
            ("growth", s("fast"), "pipe-aware"),
            ("rho", s("20"), "allowed: rtt0"),
        ] {
            let err = hybla_with(key, value).err().unwrap().to_string();
            assert!(
                err.contains(&format!("flow[0].cc_params.{key}")) && err.contains(needle),
                "{err}"
            );
        }
    }

    #[test]
    fn unknown_names_and_params_name_the_field() {
        let err = build("vegas", &BTreeMap::new(), "--cc", None)
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("--cc: unknown congestion controller"),
            "{err}"
        );
        let params = BTreeMap::from([("rtt0".to_owned(), toml::Value::String("25ms".into()))]);
        let err = build("cubic", &params, "flow[1].cc", None).err().unwrap();
        assert!(err.to_string().contains("flow[1].cc_params.rtt0"), "{err}");
        let params = BTreeMap::from([("initial_window".to_owned(), toml::Value::Boolean(true))]);
        let err = build("newreno", &params, "flow[0].cc", None).err().unwrap();
        assert!(err.to_string().contains("expected a size"), "{err}");
    }
}
