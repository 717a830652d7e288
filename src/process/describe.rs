//! How a process ended, in one line for a person: exit code or signal, why it was stopped, and
//! durations in the config's own notation.

use std::time::Duration;

use super::{Interruption, ProcessEnd};

/// One line saying how a check's process ended.
pub fn describe_end(end: &ProcessEnd, spawn_error: Option<&str>, timeout: Duration) -> String {
    if let Some(error) = spawn_error {
        return format!("could not start: {error}");
    }
    let how = match (end.exit_code, end.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    };
    let why = match end.stopped {
        Some(Interruption::Deadline) => {
            format!(" (stopped at its deadline of {})", humanize(timeout))
        }
        Some(Interruption::Cancelled) => " (cancelled)".to_string(),
        Some(Interruption::LeftoverProcesses) => {
            " (processes it left running were stopped)".to_string()
        }
        Some(Interruption::Idle) => {
            " (stopped: it printed nothing for its idle timeout)".to_string()
        }
        Some(Interruption::SpendingCap) => {
            " (stopped at once: it passed its spending cap)".to_string()
        }
        None => String::new(),
    };
    let abandoned = if end.output_abandoned {
        "; output still held open by a process outside its group was not read to the end"
    } else {
        ""
    };
    let leftovers = if end.leftovers.is_empty() {
        String::new()
    } else {
        format!(
            "; {} process(es) it left running outside its group were killed",
            end.leftovers.len()
        )
    };
    format!(
        "{how} after {:.2}s{why}{abandoned}{leftovers}",
        end.duration.as_secs_f64()
    )
}

/// A duration in the config's own notation: `90s`, `10m`, `1h30m`, `500ms`.
pub fn humanize(duration: Duration) -> String {
    let millis = duration.as_millis();
    if !millis.is_multiple_of(1000) {
        return format!("{millis}ms");
    }
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = String::new();
    for (value, unit) in [(hours, "h"), (minutes, "m"), (seconds, "s")] {
        if value > 0 {
            out.push_str(&format!("{value}{unit}"));
        }
    }
    if out.is_empty() {
        "0s".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanize_durations() {
        let table = [
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(600), "10m"),
            (Duration::from_secs(5400), "1h30m"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::ZERO, "0s"),
        ];
        for (duration, expected) in table {
            assert_eq!(humanize(duration), expected);
        }
    }
}
