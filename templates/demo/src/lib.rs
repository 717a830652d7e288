//! A deliberately flawed crate for `refine-loop demo`: clippy findings and formatting that the
//! real `cargo clippy --fix` and `cargo fmt` can repair.

pub fn answer() -> i32 {
    return 42;
}

pub fn   celsius_to_fahrenheit( celsius:f64 )->f64{ celsius*9.0/5.0+32.0 }

pub fn is_even(value: u32) -> bool {
    if value % 2 == 0 { return true } else { return false }
}

pub fn first_word(text: &str) -> &str {
    let word = text.split(' ').next().unwrap_or("");
    return word;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts() {
        assert_eq!(celsius_to_fahrenheit(100.0), 212.0);
        assert_eq!(answer(), 42);
        assert!(is_even(4));
        assert_eq!(first_word("hello world"), "hello");
    }
}
