//! The range check every config section uses for its numbers. A leaf: it imports nothing.

/// Checks `(key, value, min, max, unit)` rows; the first value out of its range is the error,
/// worded with the range and the value found.
pub fn check_ranges<'a>(
    rows: &[(&'a str, u64, u64, u64, &str)],
) -> std::result::Result<(), (&'a str, String)> {
    for &(key, value, min, max, unit) in rows {
        if !(min..=max).contains(&value) {
            return Err((
                key,
                format!("must be between {min} and {max}{unit}; it is {value}"),
            ));
        }
    }
    Ok(())
}
