//! An example project for refine-loop's quick start: it has clippy findings and a failing test on
//! purpose, so that `refine-loop check` has something to report.

/// The answer, returned the long way round.
pub fn answer() -> i32 {
    return 42;
}

/// Sums the values.
pub fn total(values: &Vec<i32>) -> i32 {
    values.iter().sum()
}

/// Celsius to Fahrenheit (with a bug the test catches).
pub fn fahrenheit(celsius: f64) -> f64 {
    celsius * 9.0 / 5.0 + 23.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(answer(), 42);
    }

    #[test]
    fn totals() {
        assert_eq!(total(&vec![1, 2, 3]), 6);
    }

    #[test]
    fn boils() {
        assert_eq!(fahrenheit(100.0), 212.0);
    }
}
