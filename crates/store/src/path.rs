//! Where the results database lives unless the command line says
//! otherwise: `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`, else
//! `~/.local/share/iolab/results.db`.

use std::ffi::OsString;
use std::path::PathBuf;

/// The default database path from the environment; None when neither
/// `IOLAB_DB`, `XDG_DATA_HOME` nor `HOME` is set.
pub fn default_path() -> Option<PathBuf> {
    default_path_from(
        std::env::var_os("IOLAB_DB"),
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`default_path`] from given values of `IOLAB_DB`, `XDG_DATA_HOME` and
/// `HOME`. Empty values count as unset, and a relative `XDG_DATA_HOME` is
/// ignored, as the XDG base directory specification says.
pub fn default_path_from(
    iolab_db: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(db) = set(iolab_db) {
        return Some(db);
    }
    if let Some(xdg) = set(xdg_data_home).filter(|p| p.is_absolute()) {
        return Some(xdg.join("iolab").join("results.db"));
    }
    set(home).map(|h| h.join(".local/share/iolab/results.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn precedence() {
        assert_eq!(
            default_path_from(os("/x/r.db"), os("/data"), os("/home/u")),
            Some(PathBuf::from("/x/r.db"))
        );
        assert_eq!(
            default_path_from(None, os("/data"), os("/home/u")),
            Some(PathBuf::from("/data/iolab/results.db"))
        );
        assert_eq!(
            default_path_from(os(""), os("relative"), os("/home/u")),
            Some(PathBuf::from("/home/u/.local/share/iolab/results.db"))
        );
        assert_eq!(default_path_from(None, None, None), None);
    }
}
