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
    (
        "resume-kuhn-large",
        include_str!("../../../scenarios/resume-kuhn-large.toml"),
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
        "hybla-vs-call",
        include_str!("../../../scenarios/hybla-vs-call.toml"),
    ),
    (
        "leo-starlink",
        include_str!("../../../scenarios/leo-starlink.toml"),
    ),
    ("geo-rcs2", include_str!("../../../scenarios/geo-rcs2.toml")),
    (
        "leo-to-geo",
        include_str!("../../../scenarios/leo-to-geo.toml"),
    ),
    (
        "media-bulk-thesis",
        include_str!("../../../scenarios/media-bulk-thesis.toml"),
    ),
    (
        "media-bulk-geo",
        include_str!("../../../scenarios/media-bulk-geo.toml"),
    ),
    (
        "media-bulk-competing",
        include_str!("../../../scenarios/media-bulk-competing.toml"),
    ),
    (
        "media-bulk-rmcat-variable",
        include_str!("../../../scenarios/media-bulk-rmcat-variable.toml"),
    ),
    (
        "media-bulk-rmcat-two-flows",
        include_str!("../../../scenarios/media-bulk-rmcat-two-flows.toml"),
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The catalog is the `scenarios/` folder: every file there is built in, under its file
    /// name, with its exact text, and nothing else is.
    #[test]
    fn catalog_matches_the_scenarios_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        files.sort();
        let mut built_in: Vec<(String, String)> = super::SCENARIOS
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        built_in.sort();
        assert_eq!(built_in, files);
        assert!(super::get(super::DEFAULT).is_some());
    }
}
