//! Which I/O errors a job goes on after: fio's `continue_on_error` (the
//! kinds of error) and `ignore_error` (the errors of each kind). An error
//! is of the verify kind when it is EILSEQ (a verification failure), else
//! of the read kind on a read and of the write kind on anything else
//! (writes, trims, syncs), as fio sorts them. A job goes on after an error
//! when its kind is one `continue_on_error` names, or one that
//! `ignore_error` gives a list for, and the error is in that kind's list:
//! the list given, or fio's default of EIO and EILSEQ.

use iolab_spec::options::choices::ContinueOnError;
use iolab_stats::Dir;

const EIO: i32 = 5;
const EILSEQ: i32 = 84;

/// The kinds of error, in `ignore_error`'s order.
const READ: usize = 0;
const WRITE: usize = 1;
const VERIFY: usize = 2;

/// fio's names for errors in `ignore_error` (errno 1 to 34, in order);
/// any other error is given by number, as in fio.
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// A job's error policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// The kinds the job goes on after (read, write, verify).
    goes_on: [bool; 3],
    /// Each kind's errors, when `ignore_error` lists them.
    lists: [Option<Vec<i32>>; 3],
}

impl ErrorPolicy {
    /// The policy of `continue_on_error=WORD` and `ignore_error=TEXT`
    /// (`READ_LIST,WRITE_LIST,VERIFY_LIST`, each list `:`-separated).
    /// `continue_on_error_last`: the job gives continue_on_error after
    /// ignore_error, which in fio sets the kinds anew (the lists stay).
    pub fn new(
        continue_on_error: ContinueOnError,
        ignore_error: Option<&str>,
        continue_on_error_last: bool,
    ) -> Result<Self, String> {
        let goes_on = match continue_on_error {
            ContinueOnError::Read => [true, false, false],
            ContinueOnError::Write => [false, true, false],
            ContinueOnError::Io => [true, true, false],
            ContinueOnError::Verify => [false, false, true],
            ContinueOnError::All => [true, true, true],
            ContinueOnError::None => [false; 3],
        };
        let mut p = ErrorPolicy {
            goes_on,
            lists: Default::default(),
        };
        let Some(text) = ignore_error else {
            return Ok(p);
        };
        for (kind, list) in text.trim().split(',').enumerate() {
            if kind > VERIFY {
                return Err(format!(
                    "ignore_error=`{text}`: more than three lists (reads, writes, verification)"
                ));
            }
            let mut errs = Vec::new();
            // An empty item ends a list, as in fio.
            for item in list.split(':').take_while(|i| !i.is_empty()) {
                errs.push(parse_error(item.trim()).ok_or_else(|| {
                    format!(
                        "ignore_error: unknown error `{item}`; use a number, or one of {}",
                        NAMES.join(", ")
                    )
                })?);
            }
            if !errs.is_empty() {
                p.goes_on[kind] = !continue_on_error_last || p.goes_on[kind];
                p.lists[kind] = Some(errs);
            }
        }
        Ok(p)
    }

    /// Whether the job goes on after `errno` on an I/O in direction `dir`.
    pub fn continues_after(&self, dir: Dir, errno: i32) -> bool {
        let kind = kind_of(dir, errno);
        self.goes_on[kind]
            && match &self.lists[kind] {
                Some(list) => list.contains(&errno),
                None => errno == EIO || errno == EILSEQ,
            }
    }

    /// Whether an error counts in the job's error count (`total_err`):
    /// fio counts those of a kind the job may go on after, fatal or not.
    /// Without any such kind every error counts (and none is shown).
    pub fn counts(&self, dir: Dir, errno: i32) -> bool {
        !self.any() || self.goes_on[kind_of(dir, errno)]
    }

    /// Whether verification failures are counted rather than fatal.
    pub fn tolerates_verify_failures(&self) -> bool {
        self.continues_after(Dir::Read, EILSEQ)
    }

    /// Whether any error may be gone on after: reports then show the
    /// error count, as fio's do.
    pub fn any(&self) -> bool {
        self.goes_on.iter().any(|g| *g)
    }
}

/// The kind of an error: verify for EILSEQ, else by direction.
fn kind_of(dir: Dir, errno: i32) -> usize {
    if errno == EILSEQ {
        VERIFY
    } else if dir == Dir::Read {
        READ
    } else {
        WRITE
    }
}

/// An error by fio's name (`ENOSPC`) or number (`28`, `-28`, `0x1c`).
fn parse_error(item: &str) -> Option<i32> {
    if item.starts_with('E') {
        return NAMES.iter().position(|n| *n == item).map(|i| i as i32 + 1);
    }
    let (digits, radix) = match item.strip_prefix("0x").or(item.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (item.trim_start_matches('-'), 10),
    };
    i32::from_str_radix(digits, radix).ok().filter(|n| *n != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::options::choices::ChoiceEnum;

    #[test]
    fn continue_on_error_goes_on_only_after_fios_non_fatal_errors() {
        let p = |w| ErrorPolicy::new(ContinueOnError::from_word(w).unwrap(), None, false).unwrap();
        assert!(p("all").continues_after(Dir::Read, EIO));
        assert!(p("io").continues_after(Dir::Write, EIO));
        assert!(p("read").continues_after(Dir::Read, EIO));
        assert!(!p("read").continues_after(Dir::Write, EIO));
        assert!(p("write").continues_after(Dir::Trim, EIO));
        assert!(!p("none").continues_after(Dir::Read, EIO));
        assert!(!p("verify").continues_after(Dir::Read, EIO));
        // EILSEQ is of the verify kind, whatever the direction.
        assert!(!p("io").continues_after(Dir::Read, EILSEQ));
        assert!(p("verify").tolerates_verify_failures());
        // ENOSPC and EOPNOTSUPP stop the job whatever the policy.
        assert!(!p("all").continues_after(Dir::Write, 28));
        assert!(!p("all").continues_after(Dir::Trim, 95));
        assert!(!p("none").any() && p("read").any());
    }

    #[test]
    fn ignore_error_lists_replace_the_default_per_kind_and_turn_it_on() {
        let p = ErrorPolicy::new(ContinueOnError::None, Some("EAGAIN,ENOSPC:122"), false).unwrap();
        assert!(p.continues_after(Dir::Read, 11));
        assert!(!p.continues_after(Dir::Read, EIO));
        assert!(p.continues_after(Dir::Write, 28));
        assert!(p.continues_after(Dir::Trim, 122));
        assert!(!p.continues_after(Dir::Write, EIO));
        assert!(!p.tolerates_verify_failures());
        assert!(p.any());
        // An empty list leaves its kind as continue_on_error says.
        let p = ErrorPolicy::new(ContinueOnError::Read, Some(",22"), false).unwrap();
        assert!(p.continues_after(Dir::Read, EIO));
        assert!(p.continues_after(Dir::Write, 22));
        assert!(!p.continues_after(Dir::Read, 22));
        // Only kinds that may go on count their errors, fatal ones too.
        let p = ErrorPolicy::new(ContinueOnError::None, Some(",22"), false).unwrap();
        assert!(p.counts(Dir::Write, 5) && !p.counts(Dir::Read, 5));
        // continue_on_error after ignore_error sets the kinds anew.
        let p = ErrorPolicy::new(ContinueOnError::None, Some("EINVAL"), true).unwrap();
        assert!(!p.continues_after(Dir::Read, 22) && !p.any());
        let p = ErrorPolicy::new(ContinueOnError::Read, Some("EINVAL"), true).unwrap();
        assert!(p.continues_after(Dir::Read, 22) && !p.continues_after(Dir::Read, 5));
        // Numbers: negative, hexadecimal.
        let p = ErrorPolicy::new(ContinueOnError::None, Some("-22:0x1c"), false).unwrap();
        assert!(p.continues_after(Dir::Read, 22) && p.continues_after(Dir::Read, 28));
    }

    #[test]
    fn unknown_errors_are_refused_with_the_names_fio_knows() {
        let e = ErrorPolicy::new(ContinueOnError::None, Some("EILSEQ"), false).unwrap_err();
        assert!(e.contains("`EILSEQ`") && e.contains("ERANGE"), "{e}");
        assert!(ErrorPolicy::new(ContinueOnError::None, Some("x1"), false).is_err());
        assert!(ErrorPolicy::new(ContinueOnError::None, Some("1,2,3,4"), false).is_err());
    }
}
