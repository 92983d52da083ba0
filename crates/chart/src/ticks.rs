//! Tick and value labels: as few decimals as the ticks need, SI prefixes for large values,
//! scientific notation for tiny ones.

/// How the tick labels of one axis are printed: with the same number of decimals (as few as
/// make every tick exact, at most 6), with SI prefixes (k, M, G, T) when the values reach
/// 100 000, or in scientific notation when all are below 0.001.
pub(crate) struct TickFormat {
    mode: TickMode,
}

enum TickMode {
    Fixed(usize),
    Si,
    Scientific,
}

impl TickFormat {
    pub(crate) fn new(ticks: &[f64]) -> Self {
        let max_abs = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let mode = if max_abs >= 1e5 {
            TickMode::Si
        } else if max_abs > 0.0 && max_abs < 1e-3 {
            TickMode::Scientific
        } else {
            TickMode::Fixed(ticks.iter().map(|&t| decimals_needed(t)).max().unwrap_or(0))
        };
        TickFormat { mode }
    }

    pub(crate) fn format(&self, v: f64) -> String {
        match self.mode {
            TickMode::Fixed(d) => fixed(v, d),
            TickMode::Si => {
                let (scale, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
                    .into_iter()
                    .find(|(s, _)| v.abs() >= *s)
                    .unwrap_or((1.0, ""));
                let x = v / scale;
                format!("{}{prefix}", trim_zeros(fixed(x, decimals_needed(x))))
            }
            TickMode::Scientific => {
                if v == 0.0 {
                    return "0".to_string();
                }
                let s = format!("{v:.2e}");
                match s.split_once('e') {
                    Some((m, e)) => format!("{}e{e}", trim_zeros(m.to_string())),
                    None => s,
                }
            }
        }
    }
}

/// Fewest decimals (≤ 6) that print `v` exactly (up to float noise).
fn decimals_needed(v: f64) -> usize {
    (0..=6)
        .find(|&d| {
            let scaled = v * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `v` with `d` decimals, never `-0`.
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with about `sig` significant digits, SI prefixes above 100 000 (for bar values).
pub(crate) fn format_sig(v: f64, sig: i32) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    if v.abs() >= 1e5 {
        let (scale, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(s, _)| v.abs() >= *s)
            .unwrap_or((1.0, ""));
        return format!("{}{prefix}", format_sig(v / scale, sig));
    }
    if v.abs() < 1e-3 {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m.to_string())),
            None => s,
        };
    }
    let magnitude = v.abs().log10().floor() as i32;
    let d = (sig - 1 - magnitude).max(0) as usize;
    trim_zeros(fixed(v, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_formatting() {
        let f = TickFormat::new(&[0.0, 0.5, 1.0, 1.5]);
        assert_eq!(
            [f.format(0.0), f.format(0.5), f.format(1.0)],
            ["0.0", "0.5", "1.0"]
        );
        let f = TickFormat::new(&[0.0, 50.0, 100.0]);
        assert_eq!(f.format(50.0), "50");
        let f = TickFormat::new(&[0.1 + 0.2, 0.6]);
        assert_eq!(f.format(0.1 + 0.2), "0.3");
        let f = TickFormat::new(&[0.0, 2e5, 1.2e6]);
        assert_eq!(
            [f.format(0.0), f.format(2e5), f.format(1.2e6)],
            ["0", "200k", "1.2M"]
        );
        let f = TickFormat::new(&[0.0, 2.5e-4]);
        assert_eq!(f.format(2.5e-4), "2.5e-4");
        let f = TickFormat::new(&[-1.0, -0.0, 1.0]);
        assert_eq!(f.format(-0.0), "0");
        assert_eq!(format_sig(0.333333, 3), "0.333");
        assert_eq!(format_sig(12.3456, 3), "12.3");
        assert_eq!(format_sig(1234.56, 3), "1235");
        assert_eq!(format_sig(2.5e6, 3), "2.5M");
    }
}
