//! `verify_dump`: each chunk that fails its check is written to files in
//! the current directory (or fio's `--aux-path`), named as fio 3.33 names them: the base name of
//! the job's file, the chunk's offset in it and what the file holds
//! (`data.20480.received`, the chunk as read; `data.20480.expected`, what
//! it should have held, regenerated from its header's seed; or
//! `data.20480.hdr_fail`, the chunk as read when its header itself failed,
//! which leaves no seed to regenerate from). Unlike fio, which truncates
//! whatever is there, a dump is created exclusively (O_CREAT|O_EXCL,
//! O_NOFOLLOW, mode 0644): an existing file or link of that name is left
//! alone and the dump skipped, with the reason.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{expected_chunk, VerifySpec};
use crate::data::DataGen;

/// Writes the dumps of chunk `c`, read from offset `at` of `file`, into
/// `dir` (fio's place: the current directory, `Path::new("")`); what
/// became of each, for the failure's report: the path written, or why
/// not.
pub fn dump_chunk(
    spec: &VerifySpec,
    data: &DataGen,
    dir: &Path,
    file: &Path,
    c: &[u8],
    at: u64,
) -> Vec<String> {
    let base = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    let name = |kind: &str| dir.join(format!("{base}.{at}.{kind}"));
    match expected_chunk(spec, data, c, at) {
        Some(expected) => vec![
            write_new(&name("received"), c),
            write_new(&name("expected"), &expected),
        ],
        None => vec![write_new(&name("hdr_fail"), c)],
    }
}

/// Creates `name`, exclusively, with `bytes`.
fn write_new(name: &Path, bytes: &[u8]) -> String {
    let shown = name.display();
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(name);
    match made.and_then(|mut f| f.write_all(bytes)) {
        Ok(()) => shown.to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            format!("{shown} not written: a file of that name exists (never overwritten)")
        }
        Err(e) => format!("{shown} not written: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{prepare_write, Method, Stamp};

    fn spec(method: Method) -> VerifySpec {
        VerifySpec {
            method,
            after_write: true,
            fatal: false,
            backlog: 0,
            interval: 0,
            pattern: (method == Method::Pattern).then(|| vec![0x5a, 0xa5]),
            dump: Some(std::path::PathBuf::new()),
        }
    }

    #[test]
    fn a_damaged_chunk_is_dumped_as_read_and_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut data = DataGen::new(&Default::default(), crate::gen::Rng::from_seed(3));
        for method in [Method::Crc32c, Method::Md5, Method::Pattern] {
            let s = spec(method);
            let mut buf = vec![0u8; 4096];
            let st = Stamp {
                offset: 8192,
                seq: 1,
                clone: 0,
                time_ns: 0,
            };
            prepare_write(&s, &mut data, &mut buf, st);
            let good = buf.clone();
            buf[3000] ^= 0x10;
            let file = Path::new("/somewhere").join(format!("f{}", method.name()));
            let names = dump_chunk(&s, &data, d, &file, &buf, 8192);
            let base = d.join(format!("f{}.8192", method.name()));
            let at = |kind: &str| format!("{}.{kind}", base.display());
            assert_eq!(names, [at("received"), at("expected")]);
            assert_eq!(std::fs::read(at("received")).unwrap(), buf);
            assert_eq!(std::fs::read(at("expected")).unwrap(), good);
            // Never overwritten.
            let again = dump_chunk(&s, &data, d, &file, &buf, 8192);
            assert!(again[0].contains("exists"), "{again:?}");
            // A damaged header: the chunk as read only.
            if method != Method::Pattern {
                buf[0] ^= 1;
                let names = dump_chunk(&s, &data, d, &file, &buf, 8192);
                assert_eq!(names, [at("hdr_fail")]);
            }
        }
    }
}
