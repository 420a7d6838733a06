//! The inputs of `import` and `validate`: files, export directories (their files checked against the manifest
//! first), or `-` for stdin, each read in the format its name tells or, when the name tells none, its content
//! ([`crate::format::sniff`]).
//!
//! Layer: files.

use crate::error::TransferError;
use crate::manifest::{self, Manifest};
use std::path::{Path, PathBuf};

/// The inputs to read, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// The files, in order (`-`: stdin).
    pub files: Vec<PathBuf>,
    /// Their size in bytes, when known (not for stdin).
    pub total_bytes: Option<u64>,
    /// What to know that does not stop the run (shards of an export not among the inputs).
    pub notices: Vec<String>,
}

/// The files to read, in order, with their total size when known (not for stdin). An export directory's files,
/// or a file with a manifest beside it, are checked against the manifest here; several export directories must
/// be different shards of one export, or unrelated exports.
///
/// # Errors
/// [`TransferError`]: an input that cannot be read, a file that does not match its manifest, export directories
/// that would import entities twice ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)).
pub fn inputs(inputs: &[PathBuf]) -> Result<Inputs, TransferError> {
    if inputs.iter().any(|i| i.as_os_str() == "-") {
        if inputs.len() > 1 {
            return Err(TransferError::invalid("stdin (`-`) is read alone: give it as the only input"));
        }
        return Ok(Inputs { files: inputs.to_vec(), total_bytes: None, notices: Vec::new() });
    }
    let mut files = Vec::new();
    let mut shards: Vec<(&Path, Manifest)> = Vec::new();
    for input in inputs {
        let metadata = std::fs::metadata(input).map_err(|e| TransferError::io("read", input, e))?;
        if metadata.is_dir() {
            let manifest = Manifest::read(input)?;
            manifest.verify(input)?;
            files.extend(manifest.files.iter().map(|f| input.join(&f.path)));
            shards.push((input, manifest));
        } else {
            let dir = input.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if dir.join(manifest::FILE_NAME).is_file() {
                let mut manifest = Manifest::read(dir)?;
                let name = input.file_name().map(|n| n.to_string_lossy().into_owned());
                manifest.files.retain(|f| Some(&f.path) == name.as_ref());
                manifest.verify(dir)?;
            }
            files.push(input.to_owned());
        }
    }
    let notices = check_shards(&shards)?.into_iter().collect();
    let mut total = 0;
    for file in &files {
        total += std::fs::metadata(file).map_err(|e| TransferError::io("read", file, e))?.len();
    }
    Ok(Inputs { files, total_bytes: Some(total), notices })
}

/// Export directories given together: the same export twice, or one shard twice, would import its entities
/// twice; shards of one export must come from one plan. A shard missing is a notice, returned.
fn check_shards(dirs: &[(&Path, Manifest)]) -> Result<Option<String>, TransferError> {
    for (i, (a, ma)) in dirs.iter().enumerate() {
        for (b, mb) in &dirs[..i] {
            let same_export = ma.started == mb.started && ma.table == mb.table && ma.shard.is_none();
            if let Some(shard) = ma.shard.filter(|_| ma.shard == mb.shard && ma.plan == mb.plan) {
                return Err(TransferError::invalid(format!(
                    "`{}` and `{}` hold the same shard {shard} of one export: its entities would be imported twice",
                    b.display(),
                    a.display(),
                )));
            }
            if same_export && ma.files == mb.files {
                return Err(TransferError::invalid(format!(
                    "`{}` and `{}` hold the same export: its entities would be imported twice",
                    b.display(),
                    a.display()
                )));
            }
            let (Some(sa), Some(sb)) = (ma.shard, mb.shard) else { continue };
            if ma.table == mb.table && sa.n == sb.n && ma.filter == mb.filter && ma.plan != mb.plan {
                return Err(TransferError::invalid(format!(
                    "`{}` (shard {sb}) and `{}` (shard {sa}) were planned differently (the table changed between \
                     the workers' starts?): their key ranges may overlap or leave gaps",
                    b.display(),
                    a.display()
                )));
            }
        }
    }
    if let Some((first, n)) = dirs.iter().find_map(|(_, m)| m.shard.map(|s| (m, s.n))) {
        let given: Vec<usize> =
            dirs.iter().filter(|(_, m)| m.plan == first.plan).filter_map(|(_, m)| m.shard.map(|s| s.k)).collect();
        let missing: Vec<String> = (1..=n).filter(|k| !given.contains(k)).map(|k| format!("{k}/{n}")).collect();
        if !missing.is_empty() {
            return Ok(Some(format!("shards {} of the export are not among the inputs", missing.join(", "))));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Shard;
    use table_model::filter::{KeyPosition, KeyRange};
    use table_model::PartitionKey;

    fn worker(k: usize, cut: &'static str) -> Manifest {
        let plan = KeyRange::all().split([KeyPosition::partition(PartitionKey::from_static(cut))]);
        Manifest {
            format: crate::manifest::FORMAT.into(),
            tool: "tablectl test".into(),
            table: "T".into(),
            filter: None,
            select: None,
            started: format!("2026-01-01T00:00:0{k}Z"),
            files: Vec::new(),
            ranges: Some(vec![plan[k - 1].clone()]),
            plan: Some(plan),
            shard: Some(Shard { k, n: 2 }),
        }
    }

    #[test]
    fn shards_of_one_plan_go_together_and_others_are_refused() {
        let (a, b) = (Path::new("a"), Path::new("b"));
        assert_eq!(check_shards(&[(a, worker(1, "m")), (b, worker(2, "m"))]).unwrap(), None);
        assert_eq!(
            check_shards(&[(a, worker(1, "m"))]).unwrap().as_deref(),
            Some("shards 2/2 of the export are not among the inputs")
        );
        let err = check_shards(&[(a, worker(1, "m")), (b, worker(1, "m"))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a` and `b` hold the same shard 1/2 of one export: its entities would be imported twice"
        );
        let err = check_shards(&[(a, worker(1, "m")), (b, worker(2, "n"))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a` (shard 1/2) and `b` (shard 2/2) were planned differently (the table changed between the workers' \
             starts?): their key ranges may overlap or leave gaps"
        );
    }
}
