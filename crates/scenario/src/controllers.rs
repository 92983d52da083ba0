//! The controller registry: every congestion controller a scenario may name in `cc`, with its
//! `cc_params` validated when the scenario loads, so a typo names the file and the field
//! before anything runs.
//!
//! This is data only; the lab turns a [`ControllerSpec`] into a quinn controller factory.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::FieldError;
use crate::overrides::override_value;
use crate::units;

/// Controllers a flow may name in `cc` (or `--cc`), in the order help texts list them.
pub const CONTROLLERS: [&str; 4] = ["newreno", "cubic", "bbr", "hybla"];

/// Smallest `initial_window`, and smallest `initial_ssthresh` given as a size, any controller
/// takes: two packets of QUIC's smallest datagram (1200 bytes, RFC 9000 §14). A window
/// below one datagram never lets the connection send its first packet. A scenario also
/// checks both against its own `mtu`: two full-size datagrams, RFC 9002's minimum window.
pub const MIN_WINDOW_BYTES: u64 = 2 * 1200;

/// A congestion controller with its validated parameters; `None` means quinn's (or Hybla's)
/// default.
#[derive(Debug, Clone, PartialEq)]
pub enum ControllerSpec {
    /// quinn's NewReno.
    NewReno {
        /// Initial window, bytes.
        initial_window: Option<u64>,
        /// Multiplicative decrease on loss (quinn's default 0.5).
        loss_reduction_factor: Option<f64>,
    },
    /// quinn's Cubic.
    Cubic {
        /// Initial window, bytes.
        initial_window: Option<u64>,
    },
    /// quinn's BBR (v1).
    Bbr {
        /// Initial window, bytes.
        initial_window: Option<u64>,
    },
    /// satquic's Hybla.
    Hybla(HyblaSpec),
}

/// Hybla's scenario parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HyblaSpec {
    /// Reference RTT of the normalization ρ = RTT / RTT0.
    pub rtt0: Option<Duration>,
    /// Where slow start ends.
    pub initial_ssthresh: Option<HyblaSsthresh>,
    /// Window growth above the pipe.
    pub growth: Option<HyblaGrowth>,
    /// Initial window, bytes.
    pub initial_window: Option<u64>,
    /// Multiplicative decrease on a congestion loss.
    pub loss_reduction_factor: Option<f64>,
    /// How long a base-RTT sample is remembered.
    pub base_rtt_window: Option<Duration>,
    /// Growth per RTT while the bottleneck is shared.
    pub competing: Option<HyblaCompeting>,
    /// How a loss is classified.
    pub classifier: Option<HyblaClassifier>,
    /// Careful Resume (RFC 9959): a reconnecting flow's second connection resumes from what
    /// its first one measured (`careful_resume = true`; off by default).
    pub careful_resume: bool,
}

impl HyblaSpec {
    /// These parameters with every one `over` sets replacing this one's (`careful_resume`
    /// when either asks): a study's parameters for every Hybla flow of its scenarios.
    pub fn overlaid(&self, over: &HyblaSpec) -> HyblaSpec {
        HyblaSpec {
            rtt0: over.rtt0.or(self.rtt0),
            initial_ssthresh: over.initial_ssthresh.or(self.initial_ssthresh),
            growth: over.growth.or(self.growth),
            initial_window: over.initial_window.or(self.initial_window),
            loss_reduction_factor: over.loss_reduction_factor.or(self.loss_reduction_factor),
            base_rtt_window: over.base_rtt_window.or(self.base_rtt_window),
            competing: over.competing.or(self.competing),
            classifier: over.classifier.or(self.classifier),
            careful_resume: over.careful_resume || self.careful_resume,
        }
    }
}

/// Hybla's `competing` choices: the window's growth per RTT while the bottleneck is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HyblaCompeting {
    /// As fast as the other flows grow, at least one segment per RTT (`"matched"`).
    Matched,
    /// One segment per RTT (`"reno"`).
    Reno,
    /// ρ segments per RTT (`"rho"`).
    Rho,
    /// ρ_q² with ρ_q = (base RTT + queue) / (RTT0 + queue) (`"queue-rho"`).
    QueueRho,
}

/// Hybla's `classifier` choices: how a loss is told congestion or random.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HyblaClassifier {
    /// The queue at the lost packet's send time against this path's range (`"threshold"`).
    Threshold,
    /// The same, or a fuller queue losing twice as often as an emptier one (`"loss-by-queue"`).
    LossByQueue,
    /// No guess: the simulator's record of why each packet was lost (`"truth"`), the bound of
    /// any classifier; an instrument for studies, which the real-time backends cannot give.
    Truth,
}

/// Hybla's `initial_ssthresh` choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HyblaSsthresh {
    /// The declared path BDP when the run knows its path, else measured (`"auto"`).
    Auto,
    /// Measured from the first flights only, ignoring the declared path (`"estimate"`).
    Estimate,
    /// No threshold: slow start until the first loss (`"none"`).
    Infinite,
    /// γ segments × ρ (`"32seg"`).
    Segments(f64),
    /// A fixed size.
    Bytes(u64),
}

/// Hybla's `growth` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HyblaGrowth {
    /// Stops RTT-compensated growth at the measured pipe (`"pipe-aware"`, the default).
    PipeAware,
    /// The published rules unchanged (`"seed"`).
    Seed,
}

impl ControllerSpec {
    /// The `initial_window` parameter, bytes, if given.
    pub fn initial_window(&self) -> Option<u64> {
        match self {
            ControllerSpec::NewReno { initial_window, .. }
            | ControllerSpec::Cubic { initial_window }
            | ControllerSpec::Bbr { initial_window } => *initial_window,
            ControllerSpec::Hybla(spec) => spec.initial_window,
        }
    }

    /// Whether the controller takes its loss verdicts from the path's record of every drop
    /// (Hybla's `classifier = "truth"`), which only the simulator keeps.
    pub fn reads_the_path_record(&self) -> bool {
        matches!(self, ControllerSpec::Hybla(spec) if spec.classifier == Some(HyblaClassifier::Truth))
    }

    /// Whether the flow's next connection resumes from what this one measured (Hybla's
    /// `careful_resume`).
    pub fn careful_resume(&self) -> bool {
        matches!(self, ControllerSpec::Hybla(spec) if spec.careful_resume)
    }

    /// The name as a scenario writes it.
    pub fn name(&self) -> &'static str {
        match self {
            ControllerSpec::NewReno { .. } => "newreno",
            ControllerSpec::Cubic { .. } => "cubic",
            ControllerSpec::Bbr { .. } => "bbr",
            ControllerSpec::Hybla(_) => "hybla",
        }
    }

    /// Controller `name` with `params`; `field` is where the name came from (`flow[0].cc`,
    /// `--cc`), and errors in parameters name `<field>_params.<key>`.
    pub fn parse(
        name: &str,
        params: &BTreeMap<String, toml::Value>,
        field: &str,
    ) -> Result<ControllerSpec, FieldError> {
        let param_field = |key: &str| format!("{field}_params.{key}");
        let unknown = |key: &str, allowed: &str| FieldError {
            field: param_field(key),
            problem: format!("unknown parameter for {name}; allowed: {allowed}"),
        };
        let only_initial_window = || -> Result<Option<u64>, FieldError> {
            let mut window = None;
            for (key, value) in params {
                match key.as_str() {
                    "initial_window" => window = Some(window_param(&param_field(key), value)?),
                    _ => return Err(unknown(key, "initial_window")),
                }
            }
            Ok(window)
        };
        match name {
            "newreno" => {
                let (mut initial_window, mut loss_reduction_factor) = (None, None);
                for (key, value) in params {
                    match key.as_str() {
                        "initial_window" => {
                            initial_window = Some(window_param(&param_field(key), value)?)
                        }
                        "loss_reduction_factor" => {
                            loss_reduction_factor = Some(float_param(&param_field(key), value)?)
                        }
                        _ => return Err(unknown(key, "initial_window, loss_reduction_factor")),
                    }
                }
                Ok(ControllerSpec::NewReno {
                    initial_window,
                    loss_reduction_factor,
                })
            }
            "cubic" => Ok(ControllerSpec::Cubic {
                initial_window: only_initial_window()?,
            }),
            "bbr" => Ok(ControllerSpec::Bbr {
                initial_window: only_initial_window()?,
            }),
            "hybla" => Ok(ControllerSpec::Hybla(hybla_spec(params, &param_field)?)),
            other => Err(FieldError {
                field: field.to_owned(),
                problem: format!(
                    "unknown congestion controller {other:?}; available: {}",
                    CONTROLLERS.join(", ")
                ),
            }),
        }
    }

    /// The controller of the command line's `--cc NAME` and `--cc-param KEY=VALUE` flags. Each
    /// value is read as a `--set` override's is (a TOML value if it is one, else a string,
    /// never `inf`, `nan` or a date), so a parameter means the same on the command line as in
    /// a scenario file; errors name `--cc-param.KEY`.
    pub fn from_flags(name: &str, params: &[String]) -> Result<ControllerSpec, FieldError> {
        let mut map = BTreeMap::new();
        for param in params {
            let (key, value) = param.split_once('=').ok_or_else(|| {
                FieldError::new(
                    format!("--cc-param {param:?}"),
                    "expected key=value, e.g. rtt0=25ms",
                )
            })?;
            map.insert(key.trim().to_owned(), override_value(value.trim()));
        }
        ControllerSpec::parse(name, &map, "--cc").map_err(|e| FieldError {
            field: e.field.replace("--cc_params", "--cc-param"),
            problem: e.problem,
        })
    }

    /// The controller with its default parameters, e.g. for `--cc`.
    pub fn named(name: &str, field: &str) -> Result<ControllerSpec, FieldError> {
        ControllerSpec::parse(name, &BTreeMap::new(), field)
    }
}

/// A window size in bytes: a size string (a bare number is missing its unit, as everywhere),
/// at least [`MIN_WINDOW_BYTES`].
fn window_param(field: &str, value: &toml::Value) -> Result<u64, FieldError> {
    let problem = |p: String| FieldError {
        field: field.to_owned(),
        problem: p,
    };
    let bytes = match value {
        toml::Value::String(s) => units::parse_size(s).map_err(|e| problem(e.to_string()))?,
        // The size parser words the missing unit ("missing unit, e.g. \"100MB\"").
        toml::Value::Integer(n) => {
            return Err(problem(match units::parse_size(&n.to_string()) {
                Err(e) => e.to_string(),
                Ok(_) => format!("expected a size such as \"15KB\", got {n}"),
            }));
        }
        other => {
            return Err(problem(format!(
                "expected a size such as \"15KB\", got {other}"
            )));
        }
    };
    check_window_bytes(bytes).map_err(problem)?;
    Ok(bytes)
}

fn check_window_bytes(bytes: u64) -> Result<(), String> {
    if bytes < MIN_WINDOW_BYTES {
        return Err(format!(
            "{bytes} bytes is less than two packets of QUIC's smallest datagram (2 × 1200 = \
             {MIN_WINDOW_BYTES} bytes)"
        ));
    }
    Ok(())
}

fn float_param(field: &str, value: &toml::Value) -> Result<f64, FieldError> {
    match value {
        toml::Value::Float(f) if (0.0..=1.0).contains(f) => Ok(*f),
        other => Err(FieldError {
            field: field.to_owned(),
            problem: format!("expected a number between 0 and 1, got {other}"),
        }),
    }
}

fn string_param<'a>(field: &str, value: &'a toml::Value) -> Result<&'a str, FieldError> {
    value.as_str().ok_or_else(|| FieldError {
        field: field.to_owned(),
        problem: format!("expected a string, got {value}"),
    })
}

fn positive_duration_param(field: &str, value: &toml::Value) -> Result<Duration, FieldError> {
    let invalid = |problem: String| FieldError {
        field: field.to_owned(),
        problem,
    };
    let duration =
        units::parse_duration(string_param(field, value)?).map_err(|e| invalid(e.to_string()))?;
    if duration.is_zero() {
        return Err(invalid("must be greater than zero".into()));
    }
    Ok(duration)
}

fn hybla_spec(
    params: &BTreeMap<String, toml::Value>,
    param_field: &dyn Fn(&str) -> String,
) -> Result<HyblaSpec, FieldError> {
    let mut spec = HyblaSpec::default();
    for (key, value) in params {
        let field = param_field(key);
        let invalid = |problem: String| FieldError {
            field: field.clone(),
            problem,
        };
        match key.as_str() {
            "rtt0" => {
                spec.rtt0 = Some(
                    positive_duration_param(&field, value)
                        .map_err(|e| invalid(e.problem.replace("must be", "RTT0 must be")))?,
                )
            }
            "initial_ssthresh" => {
                let text = string_param(&field, value)?;
                spec.initial_ssthresh = Some(match text {
                    "auto" => HyblaSsthresh::Auto,
                    "estimate" => HyblaSsthresh::Estimate,
                    "none" | "infinite" => HyblaSsthresh::Infinite,
                    _ => match text.strip_suffix("seg") {
                        Some(n) => HyblaSsthresh::Segments(
                            n.trim()
                                .parse::<f64>()
                                .ok()
                                .filter(|g| g.is_finite() && *g >= 2.0)
                                .ok_or_else(|| {
                                    invalid(format!("{text:?}: expected e.g. \"32seg\" (γ ≥ 2)"))
                                })?,
                        ),
                        None => {
                            let bytes = units::parse_size(text).map_err(|e| {
                                invalid(format!("{e}; or \"auto\", \"none\", \"32seg\""))
                            })?;
                            check_window_bytes(bytes).map_err(invalid)?;
                            HyblaSsthresh::Bytes(bytes)
                        }
                    },
                });
            }
            "growth" => {
                spec.growth = Some(match string_param(&field, value)? {
                    "pipe-aware" => HyblaGrowth::PipeAware,
                    "seed" | "plain" => HyblaGrowth::Seed,
                    other => {
                        return Err(invalid(format!(
                            "{other:?}: expected \"pipe-aware\" (default) or \"seed\""
                        )));
                    }
                });
            }
            "competing" => {
                spec.competing = Some(match string_param(&field, value)? {
                    "matched" => HyblaCompeting::Matched,
                    "reno" => HyblaCompeting::Reno,
                    "rho" => HyblaCompeting::Rho,
                    "queue-rho" => HyblaCompeting::QueueRho,
                    other => {
                        return Err(invalid(format!(
                            "{other:?}: expected \"matched\" (default), \"reno\", \"rho\" or \"queue-rho\""
                        )));
                    }
                });
            }
            "classifier" => {
                spec.classifier = Some(match string_param(&field, value)? {
                    "threshold" => HyblaClassifier::Threshold,
                    "loss-by-queue" => HyblaClassifier::LossByQueue,
                    "truth" => HyblaClassifier::Truth,
                    other => {
                        return Err(invalid(format!(
                            "{other:?}: expected \"threshold\" (default), \"loss-by-queue\" or \"truth\" (the simulator's record, simulator only)"
                        )));
                    }
                });
            }
            "initial_window" => spec.initial_window = Some(window_param(&field, value)?),
            "loss_reduction_factor" => {
                spec.loss_reduction_factor = Some(float_param(&field, value)?)
            }
            "base_rtt_window" => {
                spec.base_rtt_window = Some(positive_duration_param(&field, value)?)
            }
            "careful_resume" => {
                spec.careful_resume = value
                    .as_bool()
                    .ok_or_else(|| invalid(format!("expected true or false, got {value}")))?;
            }
            _ => {
                return Err(invalid(
                    "unknown parameter for hybla; allowed: rtt0, initial_ssthresh, growth, competing, classifier, initial_window, loss_reduction_factor, base_rtt_window, careful_resume".into(),
                ));
            }
        }
    }
    // The published rules have no pipe, no competing mode and no loss classifier: these
    // parameters would be ignored.
    if spec.growth == Some(HyblaGrowth::Seed) {
        for (key, given) in [
            ("competing", spec.competing.is_some()),
            ("classifier", spec.classifier.is_some()),
        ] {
            if given {
                return Err(FieldError {
                    field: param_field(key),
                    problem: "applies only to growth = \"pipe-aware\" (the default); growth = \
                              \"seed\" follows the published rules, which ignore it"
                        .into(),
                });
            }
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_controllers_parse_with_and_without_params() {
        for name in CONTROLLERS {
            let spec = ControllerSpec::named(name, "flow[0].cc").unwrap();
            assert_eq!(spec.name(), name);
            let params = BTreeMap::from([(
                "initial_window".to_owned(),
                toml::Value::String("30KB".into()),
            )]);
            assert!(
                ControllerSpec::parse(name, &params, "flow[0].cc").is_ok(),
                "{name}"
            );
        }
    }

    #[test]
    fn command_line_parameters_read_as_scenario_values() {
        let flags = |params: &[&str]| {
            let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
            ControllerSpec::from_flags("hybla", &params)
        };
        let spec = flags(&[
            "rtt0=25ms",
            "loss_reduction_factor=0.5",
            "competing=\"reno\"",
            "classifier=\"loss-by-queue\"",
        ])
        .unwrap();
        let ControllerSpec::Hybla(hybla) = spec else {
            panic!("{spec:?}")
        };
        assert_eq!(hybla.rtt0, Some(Duration::from_millis(25)));
        assert_eq!(hybla.loss_reduction_factor, Some(0.5));
        assert_eq!(hybla.competing, Some(HyblaCompeting::Reno));
        assert_eq!(hybla.classifier, Some(HyblaClassifier::LossByQueue));
        assert!(!ControllerSpec::Hybla(hybla).reads_the_path_record());
        assert!(
            flags(&["classifier=\"truth\""])
                .unwrap()
                .reads_the_path_record()
        );
        let err = flags(&["classifier=\"spike\""]).unwrap_err();
        assert_eq!(err.field, "--cc-param.classifier");
        assert!(err.problem.contains("\"loss-by-queue\""), "{err}");
        // `inf` and `nan` are text, as in `--set`, so no float check ever sees them.
        let err = flags(&["loss_reduction_factor=inf"]).unwrap_err();
        assert_eq!(err.field, "--cc-param.loss_reduction_factor");
        assert!(err.problem.contains("\"inf\""), "{err}");
        let err = flags(&["rtt0"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--cc-param \"rtt0\": expected key=value, e.g. rtt0=25ms"
        );
    }

    #[test]
    fn an_overlay_replaces_the_parameters_it_sets_and_keeps_the_rest() {
        let own = HyblaSpec {
            rtt0: Some(Duration::from_millis(50)),
            classifier: Some(HyblaClassifier::LossByQueue),
            ..HyblaSpec::default()
        };
        let over = HyblaSpec {
            classifier: Some(HyblaClassifier::Truth),
            initial_window: Some(30_000),
            ..HyblaSpec::default()
        };
        let both = own.overlaid(&over);
        assert_eq!(both.rtt0, Some(Duration::from_millis(50)));
        assert_eq!(both.classifier, Some(HyblaClassifier::Truth));
        assert_eq!(both.initial_window, Some(30_000));
        assert_eq!(own.overlaid(&HyblaSpec::default()), own);
    }

    fn hybla_with(key: &str, value: toml::Value) -> Result<ControllerSpec, FieldError> {
        ControllerSpec::parse(
            "hybla",
            &BTreeMap::from([(key.to_owned(), value)]),
            "flow[0].cc",
        )
    }

    #[test]
    fn hybla_parameters_parse_and_reject_nonsense() {
        let s = |v: &str| toml::Value::String(v.into());
        assert_eq!(
            hybla_with("initial_ssthresh", s("32seg")).unwrap(),
            ControllerSpec::Hybla(HyblaSpec {
                initial_ssthresh: Some(HyblaSsthresh::Segments(32.0)),
                ..HyblaSpec::default()
            })
        );
        for (key, value) in [
            ("rtt0", s("25ms")),
            ("initial_ssthresh", s("auto")),
            ("initial_ssthresh", s("none")),
            ("initial_ssthresh", s("750KB")),
            ("growth", s("seed")),
            ("base_rtt_window", s("10s")),
            ("careful_resume", toml::Value::Boolean(true)),
        ] {
            assert!(hybla_with(key, value).is_ok(), "{key}");
        }
        for (key, value, needle) in [
            ("rtt0", s("0ms"), "greater than zero"),
            ("rtt0", toml::Value::Integer(25), "expected a string"),
            ("initial_ssthresh", s("lots"), "auto"),
            ("initial_ssthresh", s("1seg"), "γ ≥ 2"),
            ("growth", s("fast"), "pipe-aware"),
            ("base_rtt_window", s("0s"), "greater than zero"),
            ("careful_resume", s("yes"), "true or false"),
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
        let err = ControllerSpec::named("vegas", "--cc").err().unwrap();
        assert!(
            err.to_string()
                .starts_with("--cc: unknown congestion controller"),
            "{err}"
        );
        let params = BTreeMap::from([("rtt0".to_owned(), toml::Value::String("25ms".into()))]);
        let err = ControllerSpec::parse("cubic", &params, "flow[1].cc")
            .err()
            .unwrap();
        assert!(err.to_string().contains("flow[1].cc_params.rtt0"), "{err}");
        let params = BTreeMap::from([("initial_window".to_owned(), toml::Value::Boolean(true))]);
        let err = ControllerSpec::parse("newreno", &params, "flow[0].cc")
            .err()
            .unwrap();
        assert!(err.to_string().contains("expected a size"), "{err}");
    }
}
