//! Decimal numbers as scenario strings write them, read and multiplied exactly: the number in
//! front of a unit, and the checks every parser shares (sign, range, whole units).

use super::error::{Quantity, UnitError};

/// A decimal number as written: `mantissa × 10^exponent`, exactly.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decimal {
    pub(super) negative: bool,
    pub(super) mantissa: u128,
    /// Always ≤ 0: minus the number of digits after the decimal point.
    pub(super) exponent: i32,
}

/// More digits than any sensible scenario value; keeps every product below `u128::MAX`.
const MAX_DIGITS: usize = 24;

impl Decimal {
    pub(super) fn as_f64(self) -> f64 {
        // Both operands are exact in f64 for the magnitudes used here, so the division is
        // correctly rounded ("0.01" / 100 gives the f64 nearest to 1e-4).
        let value = self.mantissa as f64 / 10f64.powi(-self.exponent);
        if self.negative { -value } else { value }
    }

    fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    /// `self × numerator`, as an integer if it is one: `Ok(Some(n))`, `Ok(None)` if it has a
    /// fractional part, `Err(())` on overflow. Requires a non-negative value.
    fn times_exact(self, numerator: u128) -> Result<Option<u128>, ()> {
        let scaled = self.mantissa.checked_mul(numerator).ok_or(())?;
        let divisor = 10u128.checked_pow(self.exponent.unsigned_abs()).ok_or(())?;
        Ok((scaled % divisor == 0).then_some(scaled / divisor))
    }

    /// `self × numerator`, rounded to the nearest integer (halves up). `None` on overflow.
    pub(super) fn times_rounded(self, numerator: u128) -> Option<u128> {
        let scaled = self.mantissa.checked_mul(numerator)?;
        let divisor = 10u128.checked_pow(self.exponent.unsigned_abs())?;
        Some(scaled / divisor + u128::from(scaled % divisor >= divisor.div_ceil(2)))
    }
}

/// Formats `mantissa × 10^exponent` as a plain decimal without trailing zeros.
pub(super) fn format_decimal(mantissa: u128, exponent: i32) -> String {
    if mantissa == 0 {
        return "0".into();
    }
    if exponent >= 0 {
        return format!("{mantissa}{}", "0".repeat(exponent as usize));
    }
    let shift = exponent.unsigned_abs() as usize;
    let digits = format!("{mantissa:0>width$}", width = shift + 1);
    let (int, frac) = digits.split_at(digits.len() - shift);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_owned()
    } else {
        format!("{int}.{frac}")
    }
}

/// Splits `input` into a decimal number and the (trimmed) unit after it.
pub(super) fn split_number(input: &str, quantity: Quantity) -> Result<(Decimal, &str), UnitError> {
    let not_a_number = || UnitError::NotANumber {
        quantity,
        input: input.to_owned(),
    };
    let text = input.trim();
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, unit) = body.split_at(end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(not_a_number());
    }
    let digits = format!("{int}{frac}");
    let significant = digits.trim_start_matches('0');
    if significant.len() > MAX_DIGITS || frac.len() > MAX_DIGITS {
        return Err(UnitError::OutOfRange {
            quantity,
            input: input.to_owned(),
            problem: format!("more than {MAX_DIGITS} digits"),
        });
    }
    let mantissa = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| not_a_number())?
    };
    let exponent = -(frac.len() as i32);
    Ok((
        Decimal {
            negative,
            mantissa,
            exponent,
        },
        unit.trim(),
    ))
}

pub(super) fn reject_negative(
    value: Decimal,
    quantity: Quantity,
    input: &str,
) -> Result<(), UnitError> {
    if value.negative && !value.is_zero() {
        Err(UnitError::Negative {
            quantity,
            input: input.to_owned(),
        })
    } else {
        Ok(())
    }
}

pub(super) fn too_large(quantity: Quantity, input: &str) -> UnitError {
    UnitError::OutOfRange {
        quantity,
        input: input.to_owned(),
        problem: "too large".into(),
    }
}

/// `value × multiplier` as a whole number of `what` that fits in a u64.
pub(super) fn whole(
    value: Decimal,
    multiplier: u128,
    quantity: Quantity,
    input: &str,
    what: &str,
) -> Result<u64, UnitError> {
    match value.times_exact(multiplier) {
        Ok(Some(n)) => u64::try_from(n).map_err(|_| too_large(quantity, input)),
        Ok(None) => Err(UnitError::OutOfRange {
            quantity,
            input: input.to_owned(),
            problem: format!("not a whole number of {what}"),
        }),
        Err(()) => Err(too_large(quantity, input)),
    }
}
