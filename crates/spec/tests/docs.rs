//! `docs/options.md` is generated from the option table; this test fails
//! when the file is stale. `IOLAB_BLESS=1 cargo test -p iolab-spec --test docs`
//! rewrites it.

use std::path::PathBuf;

#[test]
fn options_reference_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/options.md");
    let want = iolab_spec::help::options_markdown();
    if std::env::var_os("IOLAB_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/options.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/options.md is stale: run `IOLAB_BLESS=1 cargo test -p iolab-spec --test docs` and commit it"
    );
}

#[test]
fn reference_lists_every_option_once() {
    let md = iolab_spec::help::options_markdown();
    for d in iolab_spec::OPTIONS {
        let cell = format!("| `{}`", d.name);
        assert_eq!(md.matches(&cell).count(), 1, "{} in docs", d.name);
    }
}
