//! The C library's words for an errno (which errors a job goes on after
//! is the plan's `ErrorPolicy`).

/// strerror(3)'s text of an errno ("No space left on device").
pub(crate) fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.strip_suffix(&format!(" (os error {errno})")) {
        Some(t) => t.to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strerror_is_the_c_librarys_text() {
        assert_eq!(strerror(28), "No space left on device");
        assert_eq!(strerror(5), "Input/output error");
    }
}
