//! `filename_format`: the template for the names of files a job creates
//! when `filename` is not given. fio's placeholders are `$jobname`,
//! `$jobnum` (the clone number), `$filenum` (the file number within the
//! clone) and `$clientuid` (a client/server id, here always 0); anything else
//! is kept as written.

/// fio's default template.
pub const DEFAULT_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// Expands a `filename_format` template for one file of one job clone.
pub fn expand_filename_format(format: &str, jobname: &str, jobnum: u32, filenum: u32) -> String {
    // One pass from left to right, so text that a placeholder produced is
    // never read again as a placeholder.
    let mut out = String::with_capacity(format.len() + jobname.len());
    let mut rest = format;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        let (text, used) = if let Some(r) = tail.strip_prefix("$jobname") {
            (jobname.to_string(), tail.len() - r.len())
        } else if let Some(r) = tail.strip_prefix("$jobnum") {
            (jobnum.to_string(), tail.len() - r.len())
        } else if let Some(r) = tail.strip_prefix("$filenum") {
            (filenum.to_string(), tail.len() - r.len())
        } else if let Some(r) = tail.strip_prefix("$clientuid") {
            ("0".to_string(), tail.len() - r.len())
        } else {
            ("$".to_string(), 1)
        };
        out.push_str(&text);
        rest = &tail[used..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_format_names_files_as_fio_does() {
        assert_eq!(
            expand_filename_format(DEFAULT_FORMAT, "seqread", 3, 0),
            "seqread.3.0"
        );
    }

    #[test]
    fn placeholders_anywhere_and_unknown_kept() {
        assert_eq!(
            expand_filename_format("data/$jobname-$filenum-of-$jobnum.$clientuid", "w", 1, 7),
            "data/w-7-of-1.0"
        );
        assert_eq!(
            expand_filename_format("$foo.$jobnum$", "w", 2, 0),
            "$foo.2$"
        );
        // A job name holding a placeholder is not expanded again.
        assert_eq!(
            expand_filename_format("$jobname", "$jobnum", 5, 0),
            "$jobnum"
        );
    }
}
