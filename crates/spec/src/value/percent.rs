//! Whole percentages (0 to 100) as `bssplit` and zoned distributions take
//! them, with a message that says why a fraction, a negative number or
//! anything above 100 is refused.

use crate::error::ValueError;

/// A whole percentage 0..=100 (`ctx` says where, for messages).
pub(super) fn whole_percent(s: &str, ctx: &str) -> Result<u32, ValueError> {
    if let Ok(v) = s.parse::<u32>() {
        if v <= 100 {
            return Ok(v);
        }
        return Err(ValueError::new(format!(
            "{ctx}: `{s}` is more than 100 percent"
        )));
    }
    let why = match s.parse::<f64>() {
        Ok(f) if f < 0.0 => "it is negative",
        Ok(_) => "fractional percentages are not supported (fio would drop the fraction)",
        Err(_) => "expected a whole percentage such as 25",
    };
    Err(ValueError::new(format!(
        "{ctx}: `{s}` is not a percentage: {why}"
    )))
}
