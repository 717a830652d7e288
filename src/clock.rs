//! Civil time: the UTC date and time of the clock, as run ids and ISO 8601 timestamps, and the
//! calendar date of a day count.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as (year, month, day, hour, minute, second).
fn utc_now() -> (i64, usize, i64, u64, u64, u64) {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let (year, month, day) = civil_from_days(days);
    let of_day = seconds % 86_400;
    (
        year,
        month,
        day,
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
    )
}

/// A run id that can name a ref: the UTC time and the process id.
pub fn new_run_id() -> String {
    let (year, month, day, hour, minute, second) = utc_now();
    format!(
        "{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}-{}",
        std::process::id()
    )
}

/// The current time, ISO 8601 in UTC (`2026-11-30T03:10:17Z`).
pub fn now_iso8601() -> String {
    let (year, month, day, hour, minute, second) = utc_now();
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// The (year, month 1–12, day 1–31) of a count of days since 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, usize, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as usize, day)
}
