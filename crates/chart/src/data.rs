//! What the data says about a chart before it is drawn: axis ranges and the thinning of long
//! series.

pub(crate) fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// X range: min..max of the data, padded by `pad` × the span on both sides; a single x value
/// gets ±10 % (±1 around 0); no data gives 0..1.
pub(crate) fn x_range(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    match min_max(values) {
        None => (0.0, 1.0),
        Some((lo, hi)) if hi - lo > 0.0 && (hi - lo).is_finite() => {
            let p = pad * (hi - lo);
            (lo - p, hi + p)
        }
        Some((v, _)) => {
            let d = if v == 0.0 { 1.0 } else { v.abs() * 0.1 };
            (v - d, v + d)
        }
    }
}

/// Y range: from 0 (or the minimum, less 5 % of the span, if negative) to 1.05 × the maximum
/// (or 0 if all values are negative); all-zero or no data gives 0..1.
pub(crate) fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = match min_max(values) {
        None => return (0.0, 1.0),
        Some((lo, hi)) => (lo.min(0.0), hi.max(0.0)),
    };
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return (0.0, 1.0);
    }
    (
        if lo < 0.0 { lo - 0.05 * span } else { lo },
        if hi > 0.0 { hi + 0.05 * span } else { hi },
    )
}

/// Thins a long series with sorted x to the first, min, max and last point of each of
/// `buckets` equal-width x slices ("M4"), which draws the same picture at the pixel level.
/// Series that are short or not sorted by x are returned unchanged.
pub(crate) fn decimate(points: Vec<(f64, f64)>, buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= 4 * buckets || !points.windows(2).all(|w| w[0].0 <= w[1].0) {
        return points;
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let width = (x1 - x0) / buckets as f64;
    if width <= 0.0 || !width.is_finite() {
        return points;
    }
    let bucket = |x: f64| (((x - x0) / width) as usize).min(buckets - 1);
    let mut out = Vec::with_capacity(4 * buckets + 4);
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let start = i;
        let (mut lo, mut hi) = (i, i);
        while i < points.len() && bucket(points[i].0) == b {
            if points[i].1 < points[lo].1 {
                lo = i;
            }
            if points[i].1 > points[hi].1 {
                hi = i;
            }
            i += 1;
        }
        let mut keep = [start, lo, hi, i - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(points[k]);
                last = k;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(y_range([].into_iter()), (0.0, 1.0));
        assert_eq!(y_range([0.0, 0.0].into_iter()), (0.0, 1.0));
        assert_eq!(y_range([2.0, 10.0].into_iter()), (0.0, 10.5));
        assert_eq!(y_range([-10.0, 0.0].into_iter()), (-10.5, 0.0));
        assert_eq!(y_range([f64::NAN, 4.0].into_iter()), (0.0, 4.2));
        assert_eq!(x_range([3.0, 1.0, 2.0].into_iter(), 0.0), (1.0, 3.0));
        assert_eq!(x_range([].into_iter(), 0.0), (0.0, 1.0));
        assert_eq!(x_range([0.0].into_iter(), 0.0), (-1.0, 1.0));
        assert_eq!(x_range([10.0].into_iter(), 0.0), (9.0, 11.0));
    }

    #[test]
    fn decimation_keeps_extremes() {
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 97) as f64)).collect();
        let out = decimate(pts.clone(), 100);
        assert!(out.len() <= 400);
        assert_eq!(out.first(), pts.first());
        assert_eq!(out.last(), pts.last());
        assert!(out.iter().any(|p| p.1 == 96.0) && out.iter().any(|p| p.1 == 0.0));
        // Unsorted x is left alone.
        let mut rev = pts.clone();
        rev.reverse();
        assert_eq!(decimate(rev.clone(), 100).len(), rev.len());
    }
}
