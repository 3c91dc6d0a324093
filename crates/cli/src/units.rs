//! The units of iolab's own flags: one duration parser and one size
//! parser, so that every duration flag (`quick --time`, `compare
//! --runtime`, `--repeat-time` on every command) and every size flag
//! (`quick --size`, `compare --size`, `meta --file-size`) reads a value
//! the same way, and the same way fio's job files do.
//!
//! Durations: a number with `us`, `ms`, `s`, `m` (minutes), `h` or `d`;
//! a bare number is seconds. Sizes follow fio's default (`kb_base=1024`):
//! `k`, `m`, `g`, `t`, `p` and `kb`, `mb`, ... are powers of 1024, while
//! `kib`, `mib`, ... are powers of 1000 (fio's compatibility rule, kept so
//! that a value means on the command line what it means in a job file);
//! case does not matter and a bare number is bytes.

use std::time::Duration;

use iolab_spec::value::size::parse_size;
use iolab_spec::value::time::{parse_time, TimeUnit};
use iolab_spec::value::KbBase;

/// What every duration flag's help says about its value.
pub const DURATION_HELP: &str = "30s, 5m, 1h, 500ms; a bare number is seconds";

/// What every size flag's help says about its value.
pub const SIZE_HELP: &str = "k, m, g (and kb, mb, gb) are powers of 1024, kib, mib, gib powers of \
     1000, as in fio's job files; a bare number is bytes";

/// A duration flag's value: `30s`, `5m`, `1h`, `500ms`, or seconds.
pub fn duration(text: &str) -> Result<Duration, String> {
    parse_time(text, TimeUnit::Sec)
        .map(Duration::from_micros)
        .map_err(|e| format!("{e} (expected a duration: {DURATION_HELP})"))
}

/// A size flag's value in bytes, with fio's meaning of the units.
pub fn size(text: &str) -> Result<u64, String> {
    parse_size(text, KbBase::K1024).map_err(|e| format!("{e} ({SIZE_HELP})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_and_a_bare_number_is_seconds() {
        let s = Duration::from_secs;
        assert_eq!(duration("2"), Ok(s(2)));
        assert_eq!(duration("2s"), Ok(s(2)));
        assert_eq!(duration("3m"), Ok(s(180)));
        assert_eq!(duration("1h"), Ok(s(3600)));
        assert_eq!(duration("1d"), Ok(s(86_400)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("2MIN"), Ok(s(120)));
        for bad in ["", "2x", "-1s", "s", "1.5s"] {
            let e = duration(bad).unwrap_err();
            assert!(e.contains("a bare number is seconds"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_have_fios_meaning() {
        assert_eq!(size("65536"), Ok(65536));
        assert_eq!(size("4k"), Ok(4096));
        assert_eq!(size("4KB"), Ok(4096));
        assert_eq!(size("300m"), Ok(300 << 20));
        assert_eq!(size("4G"), Ok(4 << 30));
        // fio's compatibility rule: the IEC names are powers of 1000.
        assert_eq!(size("300MiB"), Ok(300_000_000));
        assert_eq!(size("1kib"), Ok(1000));
        for bad in ["", "4X", "G", "-1m"] {
            let e = size(bad).unwrap_err();
            assert!(e.contains("powers of 1024"), "{bad}: {e}");
        }
    }
}
