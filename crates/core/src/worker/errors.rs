//! I/O errors as fio counts them: which ones `continue_on_error` lets a
//! job go on after, and the C library's words for an errno.

use iolab_stats::Dir;

use super::{EILSEQ, EIO};

/// fio's continue_on_error: whether the job goes on after an I/O error.
/// Like fio, it goes on only after the errors it counts as non-fatal (EIO
/// and EILSEQ, fio's default `ignore_error` list) and in the directions
/// the policy names; any other error stops the job.
pub(super) fn continues_after(policy: &str, dir: Dir, errno: i32) -> bool {
    let in_policy = match policy {
        "all" | "io" => true,
        "read" => dir == Dir::Read,
        "write" => dir == Dir::Write,
        _ => false,
    };
    in_policy && (errno == EIO || errno == EILSEQ)
}

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
    use super::super::{EILSEQ, EIO};
    use super::*;
    use iolab_stats::Dir;

    #[test]
    fn continue_on_error_goes_on_only_after_fios_non_fatal_errors() {
        assert!(continues_after("all", Dir::Read, EIO));
        assert!(continues_after("io", Dir::Write, EILSEQ));
        assert!(continues_after("read", Dir::Read, EIO));
        assert!(!continues_after("read", Dir::Write, EIO));
        assert!(continues_after("write", Dir::Write, EIO));
        assert!(!continues_after("none", Dir::Read, EIO));
        assert!(!continues_after("verify", Dir::Read, EIO));
        // ENOSPC and EOPNOTSUPP stop the job whatever the policy.
        assert!(!continues_after("all", Dir::Write, 28));
        assert!(!continues_after("all", Dir::Trim, 95));
    }

    #[test]
    fn strerror_is_the_c_librarys_text() {
        assert_eq!(strerror(28), "No space left on device");
        assert_eq!(strerror(5), "Input/output error");
    }
}
