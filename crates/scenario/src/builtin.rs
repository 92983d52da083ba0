//! Scenarios compiled into the binary, so `satquic run` works on a fresh machine without
//! pointing at a file. The files in `scenarios/` are the source of truth.

/// (name, TOML text) of every built-in scenario.
pub const SCENARIOS: &[(&str, &str)] = &[
    (
        "thesis-geo",
        include_str!("../../../scenarios/thesis-geo.toml"),
    ),
    (
        "thesis-leo",
        include_str!("../../../scenarios/thesis-leo.toml"),
    ),
    (
        "kuhn-small",
        include_str!("../../../scenarios/kuhn-small.toml"),
    ),
    (
        "kuhn-medium",
        include_str!("../../../scenarios/kuhn-medium.toml"),
    ),
    (
        "kuhn-congested",
        include_str!("../../../scenarios/kuhn-congested.toml"),
    ),
    (
        "kuhn-variable",
        include_str!("../../../scenarios/kuhn-variable.toml"),
    ),
    (
        "kuhn-large",
        include_str!("../../../scenarios/kuhn-large.toml"),
    ),
    (
        "kuhn-lossy",
        include_str!("../../../scenarios/kuhn-lossy.toml"),
    ),
    ("sat", include_str!("../../../scenarios/sat.toml")),
    ("satl", include_str!("../../../scenarios/satl.toml")),
    (
        "picoquic-sat",
        include_str!("../../../scenarios/picoquic-sat.toml"),
    ),
    (
        "hybla-fairness",
        include_str!("../../../scenarios/hybla-fairness.toml"),
    ),
    (
        "hybla-vs-newreno",
        include_str!("../../../scenarios/hybla-vs-newreno.toml"),
    ),
    (
        "hybla-vs-cubic",
        include_str!("../../../scenarios/hybla-vs-cubic.toml"),
    ),
    (
        "leo-starlink",
        include_str!("../../../scenarios/leo-starlink.toml"),
    ),
    (
        "leo-to-geo",
        include_str!("../../../scenarios/leo-to-geo.toml"),
    ),
];

/// The scenario `satquic run` plays when given none.
pub const DEFAULT: &str = "thesis-geo";

/// The TOML text of a built-in scenario.
pub fn get(name: &str) -> Option<&'static str> {
    SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
