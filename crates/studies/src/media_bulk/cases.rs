//! The cases of the media/bulk evaluation: the shipped media-bulk scenarios and the RMCAT
//! ones, each with Cubic and with our controller, the balancer on the connection that carries
//! media and bulk, and which targets apply to it.

use scenario::Scenario;

use super::MediaBulkError;

/// A path and its traffic, before the controller is chosen.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Case id stem (`thesis`, `geo-3x-up`, …).
    pub id: &'static str,
    /// The built-in scenario ([`scenario::builtin`]).
    pub scenario: &'static str,
    /// `--set` overrides on top of it (the balancer on our flow included).
    pub overrides: &'static [&'static str],
    /// The key that sets the controller of our flows (`flow.cc`, or `flow.0.cc` when another
    /// flow competes and must keep its own).
    pub cc_key: &'static str,
    /// What the case is, in a line.
    pub what: &'static str,
}

/// The controllers every setup runs with: the seed's stack's and ours.
pub const CONTROLLERS: [&str; 2] = ["cubic", "hybla"];

/// Every setup, in report order.
pub const SETUPS: &[Setup] = &[
    Setup {
        id: "thesis",
        scenario: "media-bulk-thesis",
        overrides: &["flow.scheduler=balancer"],
        cc_key: "flow.cc",
        what: "[Ruehl2024]'s schedule 2/4/0.6/1/3/1 Mbit/s, RTT 50 ms, media 2 Mbit/s, bulk 2 Mbit/s",
    },
    Setup {
        id: "geo",
        scenario: "media-bulk-geo",
        overrides: &["flow.scheduler=balancer"],
        cc_key: "flow.cc",
        what: "the same schedule at RTT 600 ms with 1 s of buffer",
    },
    Setup {
        id: "geo-3x-up",
        scenario: "media-bulk-geo",
        overrides: &[
            "flow.scheduler=balancer",
            "path.forward.schedule.0.rate=6Mbit",
            "path.forward.schedule.2.rate=1.8Mbit",
            "path.forward.schedule.3.rate=5.4Mbit",
            "path.forward.schedule.4.rate=1.8Mbit",
            "flow.app.1.rate=10Mbit",
        ],
        cc_key: "flow.cc",
        what: "GEO with every rise 3×: 2/6/0.6/1.8/5.4/1.8 Mbit/s, bulk offered 10 Mbit/s",
    },
    Setup {
        id: "thesis-adaptive",
        scenario: "media-bulk-thesis",
        overrides: &["flow.scheduler=balancer", "flow.app.0.adaptive=true"],
        cc_key: "flow.cc",
        what: "thesis with adaptive media",
    },
    Setup {
        id: "geo-adaptive",
        scenario: "media-bulk-geo",
        overrides: &["flow.scheduler=balancer", "flow.app.0.adaptive=true"],
        cc_key: "flow.cc",
        what: "GEO with adaptive media",
    },
    Setup {
        id: "competing",
        scenario: "media-bulk-competing",
        overrides: &["flow.0.scheduler=balancer"],
        cc_key: "flow.0.cc",
        what: "thesis plus a Cubic download on the bottleneck from 30 s",
    },
    Setup {
        id: "rmcat-5.1",
        scenario: "media-bulk-rmcat-variable",
        overrides: &[],
        cc_key: "flow.cc",
        what: "RFC 8867 §5.1: 1/2.5/0.6/1 Mbit/s, one-way 50 ms, adaptive 1.5 Mbit/s media + bulk",
    },
    Setup {
        id: "rmcat-5.2",
        scenario: "media-bulk-rmcat-two-flows",
        overrides: &[],
        cc_key: "flow.cc",
        what: "RFC 8867 §5.2: two media + bulk connections, 4/2/3.5/1/2 Mbit/s",
    },
];

/// One case: a setup with a controller.
#[derive(Debug, Clone)]
pub struct Case {
    /// `<setup>/<controller>`.
    pub id: String,
    /// The setup.
    pub setup: Setup,
    /// The controller of our flows.
    pub cc: &'static str,
}

impl Case {
    /// The `--set` overrides of this case: the setup's and the controller's.
    pub fn overrides(&self) -> Vec<String> {
        self.setup
            .overrides
            .iter()
            .map(|s| (*s).to_owned())
            .chain(std::iter::once(format!(
                "{}={}",
                self.setup.cc_key, self.cc
            )))
            .collect()
    }

    /// The scenario this case runs.
    pub fn scenario(&self) -> Result<Scenario, MediaBulkError> {
        let text = scenario::builtin::get(self.setup.scenario)
            .ok_or(MediaBulkError::NotBuiltIn(self.setup.scenario))?;
        Ok(Scenario::from_toml_str(
            text,
            self.setup.scenario,
            &self.overrides(),
        )?)
    }
}

/// Every case, in report order: each setup with each controller.
pub fn all() -> Vec<Case> {
    SETUPS
        .iter()
        .flat_map(|setup| {
            CONTROLLERS.iter().map(|cc| Case {
                id: format!("{}/{cc}", setup.id),
                setup: *setup,
                cc,
            })
        })
        .collect()
}

/// The cases whose id starts with one of `filters` (all when empty), in report order.
pub fn selected(filters: &[String]) -> Result<Vec<Case>, MediaBulkError> {
    let cases = all();
    for filter in filters {
        if !cases.iter().any(|c| c.id.starts_with(filter.as_str())) {
            return Err(MediaBulkError::UnknownCase(
                filter.clone(),
                cases
                    .iter()
                    .map(|c| c.id.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
    }
    Ok(cases
        .into_iter()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| c.id.starts_with(f.as_str())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case loads, puts the balancer on every flow that carries media, and the chosen
    /// controller on those flows only (a competitor keeps its own).
    #[test]
    fn every_case_loads_with_the_balancer_and_its_controller_on_our_flows() {
        for case in all() {
            let scenario = case
                .scenario()
                .unwrap_or_else(|e| panic!("{}: {e}", case.id));
            for flow in &scenario.flows {
                let ours = flow
                    .apps
                    .iter()
                    .any(|a| matches!(a.kind, scenario::apps::AppKind::Media(_)));
                if ours {
                    assert_eq!(flow.scheduler.name(), "balancer", "{}", case.id);
                    assert_eq!(flow.controller.name(), case.cc, "{}", case.id);
                } else {
                    assert_eq!(flow.controller.name(), "cubic", "{}", case.id);
                }
            }
        }
    }

    #[test]
    fn geo_3x_up_rises_threefold_every_time() {
        let case = all()
            .into_iter()
            .find(|c| c.id == "geo-3x-up/cubic")
            .unwrap();
        let scenario = case.scenario().unwrap();
        let mut rates = vec![scenario.forward.rate_bps];
        rates.extend(scenario.forward.schedule.iter().filter_map(|s| s.rate_bps));
        let rises: Vec<f64> = rates
            .windows(2)
            .filter(|w| w[1] > w[0])
            .map(|w| w[1] as f64 / w[0] as f64)
            .collect();
        assert_eq!(rises.len(), 3, "{rates:?}");
        assert!(rises.iter().all(|r| (r - 3.0).abs() < 1e-9), "{rises:?}");
    }

    #[test]
    fn an_unknown_case_names_the_known_ones() {
        let error = selected(&["moon".into()]).unwrap_err().to_string();
        assert!(
            error.contains("moon") && error.contains("rmcat-5.1/hybla"),
            "{error}"
        );
        assert_eq!(selected(&["geo/".into()]).unwrap().len(), 2);
    }
}
