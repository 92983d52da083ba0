//! Results of the IP-level mode (`satquic netns`): bytes delivered towards the client per
//! transport connection, per time bucket, turned into flows.csv, a goodput figure and a table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chart::{Chart, PlotError, Series};

/// Connections that carried less than this are left out (handshakes, DNS, stray packets).
pub const MIN_REPORTED_BYTES: u64 = 100_000;

/// Buckets averaged for the figure's goodput line (with 100 ms buckets: 1 s).
const SMOOTHING_BUCKETS: usize = 10;

/// One transport connection seen on the emulated path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpFlow {
    /// "tcp" or "udp".
    pub protocol: String,
    /// Server-side port.
    pub server_port: u16,
    /// Client-side port.
    pub client_port: u16,
    /// IP bytes delivered towards the client in each bucket since the start.
    pub buckets: Vec<u64>,
}

/// One reported connection.
#[derive(Debug, Clone, PartialEq)]
pub struct IpFlowSummary {
    /// The connection.
    pub protocol: String,
    /// Server-side port.
    pub server_port: u16,
    /// Client-side port.
    pub client_port: u16,
    /// IP bytes delivered towards the client.
    pub bytes: u64,
    /// Mean rate from the first delivered byte to the end, bit/s (IP bytes).
    pub mean_bps: f64,
}

/// Why the results could not be written.
#[derive(Debug, thiserror::Error)]
pub enum IpFlowsError {
    /// flows.csv.
    #[error("writing {path}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// Why.
        source: csv::Error,
    },
    /// The figure.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Summarizes the connections that carried at least [`MIN_REPORTED_BYTES`].
pub fn summarize(flows: &[IpFlow], bucket: Duration) -> Vec<IpFlowSummary> {
    flows
        .iter()
        .filter_map(|flow| {
            let bytes: u64 = flow.buckets.iter().sum();
            if bytes < MIN_REPORTED_BYTES {
                return None;
            }
            let first = flow.buckets.iter().position(|&b| b > 0).unwrap_or(0);
            let active_s = (flow.buckets.len() - first) as f64 * bucket.as_secs_f64();
            Some(IpFlowSummary {
                protocol: flow.protocol.clone(),
                server_port: flow.server_port,
                client_port: flow.client_port,
                bytes,
                mean_bps: bytes as f64 * 8.0 / active_s,
            })
        })
        .collect()
}

/// Writes `dir/flows.csv` (every bucket of every reported connection) and `dir/flows.png|svg`
/// (1 s goodput per connection); returns the written files.
pub fn write(dir: &Path, flows: &[IpFlow], bucket: Duration) -> Result<Vec<PathBuf>, IpFlowsError> {
    let csv_path = dir.join("flows.csv");
    let csv_error = |source| IpFlowsError::Csv {
        path: csv_path.clone(),
        source,
    };
    let mut csv = csv::Writer::from_path(&csv_path).map_err(csv_error)?;
    csv.write_record(["protocol", "server_port", "client_port", "t_s", "bytes"])
        .map_err(csv_error)?;
    let mut series = Vec::new();
    for flow in flows {
        if flow.buckets.iter().sum::<u64>() < MIN_REPORTED_BYTES {
            continue;
        }
        let mut points = Vec::new();
        for (i, bytes) in flow.buckets.iter().enumerate() {
            let t = (i + 1) as f64 * bucket.as_secs_f64();
            csv.write_record([
                flow.protocol.clone(),
                flow.server_port.to_string(),
                flow.client_port.to_string(),
                format!("{t:.1}"),
                bytes.to_string(),
            ])
            .map_err(csv_error)?;
            let window = &flow.buckets[(i + 1).saturating_sub(SMOOTHING_BUCKETS)..=i];
            points.push((
                t,
                window.iter().sum::<u64>() as f64 * 8.0
                    / (window.len() as f64 * bucket.as_secs_f64())
                    / 1e6,
            ));
        }
        series.push(Series {
            label: format!(
                "{} server :{} to client :{}",
                flow.protocol, flow.server_port, flow.client_port
            ),
            points,
        });
    }
    csv.flush().map_err(|e| csv_error(csv::Error::from(e)))?;
    let mut written = vec![csv_path.clone()];
    written.extend(chart::line_chart(
        &dir.join("flows"),
        &Chart {
            title: "IP-level emulation: goodput per flow towards the client (1 s average)",
            x_label: "time (s)",
            y_label: "Mbit/s (IP bytes)",
            series: &series,
        },
    )?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_connections_are_left_out_and_rates_count_from_the_first_byte() {
        let flows = [
            IpFlow {
                protocol: "tcp".into(),
                server_port: 5201,
                client_port: 40000,
                // Nothing for 1 s, then 125 000 B per 100 ms (10 Mbit/s) for 2 s.
                buckets: [vec![0; 10], vec![125_000; 20]].concat(),
            },
            IpFlow {
                protocol: "udp".into(),
                server_port: 53,
                client_port: 40001,
                buckets: vec![500],
            },
        ];
        let summary = summarize(&flows, Duration::from_millis(100));
        assert_eq!(summary.len(), 1);
        assert_eq!(summary[0].bytes, 2_500_000);
        assert!((summary[0].mean_bps - 10e6).abs() < 1e-6);
    }
}
