//! A directory of a test's own in the system's temporary directory, removed when the test ends.
//!
//! Layer: base.

use std::path::{Path, PathBuf};

/// A directory of a test's own in the temporary directory, `<prefix>-<pid>`, emptied when made and removed when
/// dropped, so that a run leaves nothing behind however the test returns. A test that fails (the thread is
/// panicking when it is dropped) keeps it, for a look at what was written, and says where it is on stderr.
///
/// ```
/// use table_model_test_utils::temp_dir::TempDir;
/// let path = {
///     let dir = TempDir::new("test-utils-doc");
///     std::fs::write(dir.join("a.txt"), "a").unwrap();
///     assert!(dir.join("a.txt").is_file());
///     dir.to_path_buf()
/// };
/// assert!(!path.exists());
/// ```
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Makes `<temp>/<prefix>-<pid>`, empty (what an earlier run of the same process id left is removed).
    ///
    /// # Panics
    /// When the directory cannot be made.
    pub fn new(prefix: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        TempDir(dir)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the failed test's directory is kept: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
