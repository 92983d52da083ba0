//! The grid of a sweep: axes parsed from `--grid KEY=V1,V2`, their points (first axis
//! slowest), and every run of a plan (point × controller × seed) with its resolved scenario.

use std::collections::BTreeSet;

use lab::runner::{self, Job};
use scenario::{RunSpec, Scenario, ScenarioError};

use super::error::SweepError;

/// One swept parameter: a scenario key (as for `--set`) and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// Override key, e.g. `flow.0.access_delay`.
    pub key: String,
    /// Values as written, e.g. `["0ms", "100ms"]`.
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...` arguments into axes.
pub fn parse_grid(args: &[String]) -> Result<Vec<Axis>, SweepError> {
    let mut axes: Vec<Axis> = Vec::new();
    for arg in args {
        let problem = |p: &str| SweepError::Grid {
            arg: arg.clone(),
            problem: p.to_owned(),
        };
        let (key, values) = arg.split_once('=').ok_or_else(|| {
            problem("expected KEY=V1,V2,..., e.g. path.forward.rate=5Mbit,10Mbit")
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(problem("empty key"));
        }
        let values: Vec<String> = split_values(values).map_err(|p| problem(&p))?;
        if values.iter().any(String::is_empty) {
            return Err(problem("empty value"));
        }
        let unique: BTreeSet<&String> = values.iter().collect();
        if unique.len() != values.len() {
            return Err(problem("a value is repeated"));
        }
        if axes.iter().any(|a| a.key == key) {
            return Err(problem("this key is already swept by another --grid"));
        }
        axes.push(Axis {
            key: key.to_owned(),
            values,
        });
    }
    if axes.is_empty() {
        return Err(SweepError::Grid {
            arg: String::new(),
            problem: "at least one --grid KEY=V1,V2 is needed".into(),
        });
    }
    Ok(axes)
}

/// Splits `V1,V2,...` at the commas outside TOML brackets and quotes, so that a value may be
/// an inline table, an array or a quoted string holding commas (`--set` reads values as
/// TOML): `{ model = "bernoulli", p = "1%" },{ model = "bernoulli", p = "2%" }` is two
/// values. Values are trimmed.
fn split_values(text: &str) -> Result<Vec<String>, String> {
    const HINT: &str = "a grid value may hold commas only inside a whole TOML inline table \
                        {...}, array [...] or quoted string, e.g. \
                        path.forward.loss={ model = \"bernoulli\", p = \"1%\" },\
                        { model = \"bernoulli\", p = \"2%\" }";
    let mut values = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    // The open quote, and whether the previous character escaped this one (basic strings).
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            current.push(c);
            if escaped {
                escaped = false;
            } else if q == '"' && c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            // A quote opens a string where TOML has one: a value's start, or inside brackets.
            '"' | '\'' if depth > 0 || current.trim().is_empty() => {
                quote = Some(c);
                current.push(c);
            }
            '{' | '[' => {
                depth += 1;
                current.push(c);
            }
            '}' | ']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("{c:?} closes nothing; {HINT}"))?;
                current.push(c);
            }
            ',' if depth == 0 => values.push(std::mem::take(&mut current).trim().to_owned()),
            _ => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("a quoted string is not closed; {HINT}"));
    }
    if depth > 0 {
        return Err(format!("a {{ or [ is not closed; {HINT}"));
    }
    values.push(current.trim().to_owned());
    Ok(values)
}

/// Every combination of axis values, first axis varying slowest.
pub fn points(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                axis.values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.push((axis.key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    points
}

pub(crate) fn point_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What to sweep.
pub struct SweepPlan<'a> {
    /// Loads the scenario with extra overrides (the point's), e.g. from a file or a built-in.
    pub load: &'a dyn Fn(&[String]) -> Result<Scenario, ScenarioError>,
    /// Swept parameters.
    pub axes: Vec<Axis>,
    /// Controller overrides (`None`: the scenario's own).
    pub controllers: Vec<Option<String>>,
    /// Seeds per point and controller.
    pub seeds: Vec<u64>,
}

/// A sweep run, ready to execute.
pub(crate) struct Entry {
    pub(crate) point: Vec<(String, String)>,
    pub(crate) scenario: Scenario,
    pub(crate) job: Job,
}

/// Plans every run of the sweep without running one: the number of runs, or the first error (a
/// grid key or value the scenario refuses, an unknown controller), so that a sweep submitted
/// to a cluster fails before it is queued rather than in every array task.
pub fn check(plan: &SweepPlan) -> Result<usize, SweepError> {
    entries(plan).map(|all| all.len())
}

pub(crate) fn entries(plan: &SweepPlan) -> Result<Vec<Entry>, SweepError> {
    let mut entries = Vec::new();
    for point in points(&plan.axes) {
        let overrides: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let scenario = (plan.load)(&overrides).map_err(|source| SweepError::Scenario {
            point: point_label(&point),
            source,
        })?;
        for cc in &plan.controllers {
            for &seed in &plan.seeds {
                let spec = RunSpec {
                    cc_override: cc.clone(),
                    seed,
                };
                let job = runner::jobs(&scenario, std::slice::from_ref(&spec), None)?
                    .pop()
                    .expect("one spec, one job");
                entries.push(Entry {
                    point: point.clone(),
                    scenario: scenario.clone(),
                    job,
                });
            }
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_parsing_and_points() {
        let axes = parse_grid(&["a=1,2".into(), "b=x,y,z".into()]).unwrap();
        let p = points(&axes);
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[0],
            vec![("a".into(), "1".into()), ("b".into(), "x".into())]
        );
        assert_eq!(
            p[5],
            vec![("a".into(), "2".into()), ("b".into(), "z".into())]
        );
        for (bad, needle) in [
            ("nokey", "expected KEY="),
            ("=1,2", "empty key"),
            ("a=1,,2", "empty value"),
            ("a=1,1", "repeated"),
        ] {
            let err = parse_grid(&[bad.into()]).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        // Commas inside TOML tables, arrays and strings do not split values.
        let axes = parse_grid(&[
            r#"path.forward.loss={ model = "bernoulli", p = "1%" }, { model = "bernoulli", p = "2%" }"#
                .into(),
            r#"flow.name="a,b",'c,d',[1, 2],e"#.into(),
        ])
        .unwrap();
        assert_eq!(
            axes[0].values,
            [
                r#"{ model = "bernoulli", p = "1%" }"#,
                r#"{ model = "bernoulli", p = "2%" }"#
            ]
        );
        assert_eq!(axes[1].values, [r#""a,b""#, "'c,d'", "[1, 2]", "e"]);
        for bad in [
            r#"path.forward.loss={ model = "bernoulli""#,
            "a=x]",
            r#"a="open,b"#,
        ] {
            let err = parse_grid(&[bad.into()]).unwrap_err().to_string();
            assert!(
                err.contains("commas only inside a whole TOML inline table"),
                "{bad}: {err}"
            );
        }
        let err = parse_grid(&["a=1".into(), "a=2".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("already swept"), "{err}");
        assert!(parse_grid(&[]).is_err());
    }
}
