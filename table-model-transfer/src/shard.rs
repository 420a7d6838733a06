//! A worker's share of a scan's key ranges (`--shard K/N`): [`Shard`].
//!
//! Layer: base.

use crate::error::TransferError;
use std::fmt;
use std::str::FromStr;

/// Worker `k` of `n` (`--shard K/N`, both counted from 1 on the command line): a fixed share of the plan's
/// ranges, the library's [`shard`](table_model::filter::shard).
///
/// ```
/// use table_model_transfer::shard::Shard;
/// let shard: Shard = "2/3".parse()?;
/// assert_eq!((shard.k, shard.n), (2, 3));
/// assert_eq!(shard.to_string(), "2/3");
/// assert_eq!(
///     "4/3".parse::<Shard>().unwrap_err().to_string(),
///     "invalid shard `4/3`: K must be from 1 to N (3)"
/// );
/// # Ok::<(), table_model_transfer::error::TransferError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This worker, from 1.
    pub k: usize,
    /// The number of workers.
    pub n: usize,
}

impl Shard {
    /// The whole plan: worker 1 of 1.
    pub const ALL: Shard = Shard { k: 1, n: 1 };
}

impl FromStr for Shard {
    type Err = TransferError;

    fn from_str(text: &str) -> Result<Shard, TransferError> {
        let invalid = |why: &str| TransferError::invalid(format!("invalid shard `{text}`: {why}"));
        let (k, n) = text.split_once('/').ok_or_else(|| invalid("write it K/N, such as 2/3"))?;
        let number = |s: &str| s.trim().parse::<usize>().map_err(|_| invalid("K and N must be whole numbers"));
        let (k, n) = (number(k)?, number(n)?);
        if n == 0 {
            return Err(invalid("N must be at least 1"));
        }
        if k == 0 || k > n {
            return Err(invalid(&format!("K must be from 1 to N ({n})")));
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}
