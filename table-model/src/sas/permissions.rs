//! The permission sets of a SAS, each a set of letters the service reads in one order: what a table SAS or a
//! stored access policy allows ([`TableSasPermissions`], `sp`), what an account SAS allows
//! ([`AccountSasPermissions`], `sp`) and on which resource types ([`AccountSasResourceTypes`], `srt`).

use super::error::{SasError, SasErrorKind};
use std::fmt;

/// Defines a set of SAS letters: constants, `|`, the letters in the service's order or in a given one, and
/// parsing.
macro_rules! letters {
    (
        $(#[$meta:meta])*
        $name:ident in $field:literal { $( $(#[$flag_meta:meta])* $flag:ident = $letter:literal, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            /// Bit `i` set: the letter at `LETTERS[i]` is given.
            pub(super) bits: u8,
            /// The order the letters are written in when it is not the service's: each letter's position in
            /// `LETTERS` plus one, 4 bits a letter from the lowest bits; 0 for the service's order. Two values
            /// are therefore equal exactly when they are written alike.
            pub(super) order: u32,
        }

        impl $name {
            $( $(#[$flag_meta])* pub const $flag: $name = $name { bits: 1 << Self::position($letter), order: 0 }; )*

            /// The letters, in the service's order.
            const LETTERS: &'static str = concat!($($letter),*);

            const fn position(letter: char) -> u32 {
                let mut i = 0;
                while Self::LETTERS.as_bytes()[i] != letter as u8 {
                    i += 1;
                }
                i as u32
            }

            /// None.
            pub const fn empty() -> Self {
                $name { bits: 0, order: 0 }
            }

            /// Every one, in the service's order.
            pub const fn all() -> Self {
                $name { bits: ((1u16 << Self::LETTERS.len()) - 1) as u8, order: 0 }
            }

            /// Whether there is none.
            pub const fn is_empty(self) -> bool {
                self.bits == 0
            }

            /// Whether every one of `other` is in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.bits & other.bits == other.bits
            }

            /// From the letters, in any order; they are written in the service's order. The same as
            /// [`str::parse`].
            ///
            /// # Errors
            /// [`SasErrorKind::UnknownLetter`] for a letter that is not one of these, and
            /// [`SasErrorKind::RepeatedLetter`] for one given twice, each with the letter and its byte index.
            pub fn parse(letters: &str) -> Result<Self, SasError> {
                Self::read(letters, false)
            }

            /// From the letters, written in the order given (some tools sign `dr` where the service's order is
            /// `rd`): the same letters as [`parse`](Self::parse) takes, each at most once. The order is kept
            /// until the value is combined with `|`, which writes the service's order.
            ///
            /// # Errors
            /// As [`parse`](Self::parse).
            pub fn in_order(letters: &str) -> Result<Self, SasError> {
                Self::read(letters, true)
            }

            fn read(letters: &str, keep_order: bool) -> Result<Self, SasError> {
                let (mut bits, mut order, mut shift, mut ascending) = (0u8, 0u32, 0, true);
                for (index, letter) in letters.char_indices() {
                    // The letters are ASCII: a byte index in `LETTERS` is a position.
                    let Some(i) = Self::LETTERS.find(letter) else {
                        let allowed = Self::LETTERS;
                        return Err(SasError::new(SasErrorKind::UnknownLetter { field: $field, letter, index, allowed }));
                    };
                    if bits & (1 << i) != 0 {
                        return Err(SasError::new(SasErrorKind::RepeatedLetter { field: $field, letter, index }));
                    }
                    ascending &= bits >> i == 0;
                    bits |= 1 << i;
                    order |= (i as u32 + 1) << shift;
                    shift += 4;
                }
                Ok($name { bits, order: if keep_order && !ascending { order } else { 0 } })
            }
        }

        impl std::str::FromStr for $name {
            type Err = SasError;
            /// As [`parse`](Self::parse).
            fn from_str(letters: &str) -> Result<Self, SasError> {
                Self::parse(letters)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            /// Both sets, written in the service's order.
            fn bitor(self, other: Self) -> Self {
                $name { bits: self.bits | other.bits, order: 0 }
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                *self = *self | other;
            }
        }

        impl fmt::Display for $name {
            /// The letters, in the service's order or in the one given to [`in_order`](Self::in_order).
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let letters = Self::LETTERS.as_bytes();
                if self.order == 0 {
                    for (i, &l) in letters.iter().enumerate() {
                        if self.bits & (1 << i) != 0 {
                            fmt::Write::write_char(f, char::from(l))?;
                        }
                    }
                } else {
                    let mut order = self.order;
                    while order != 0 {
                        fmt::Write::write_char(f, char::from(letters[(order & 0xf) as usize - 1]))?;
                        order >>= 4;
                    }
                }
                Ok(())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(\"{self}\")", stringify!($name))
            }
        }
    };
}

letters! {
    /// What a table SAS or a stored access policy allows, written in the service's order `raud` (or, from
    /// [`in_order`](Self::in_order), in the order given).
    ///
    /// ```
    /// use table_model::sas::TableSasPermissions;
    /// let p = TableSasPermissions::DELETE | TableSasPermissions::READ;
    /// assert_eq!(p.to_string(), "rd");
    /// assert_eq!(TableSasPermissions::all().to_string(), "raud");
    /// assert_eq!(TableSasPermissions::parse("dr")?, p);
    /// assert_eq!("dr".parse::<TableSasPermissions>()?, p);
    /// assert_eq!(
    ///     TableSasPermissions::parse("rw").unwrap_err().to_string(),
    ///     "invalid shared access signature: `sp` (permissions) has `w` at index 1, which is not one of `raud`"
    /// );
    ///
    /// // Signed as given, for a token another tool made with `sp=dr`.
    /// let as_given = TableSasPermissions::in_order("dr")?;
    /// assert_eq!(as_given.to_string(), "dr");
    /// assert_ne!(as_given, p);
    /// assert!(as_given.contains(TableSasPermissions::READ));
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    TableSasPermissions in "sp" {
        /// `r`: get entities and query them.
        READ = 'r',
        /// `a`: insert entities, and insert-or-merge / insert-or-replace (with [`UPDATE`](Self::UPDATE)).
        ADD = 'a',
        /// `u`: update entities (merge, replace), and upserts (with [`ADD`](Self::ADD)).
        UPDATE = 'u',
        /// `d`: delete entities.
        DELETE = 'd',
    }
}

letters! {
    /// What an account SAS allows, written in the service's order `rwdlacup` (or, from
    /// [`in_order`](Self::in_order), in the order given). These are every letter the service defines for an
    /// account SAS of version [`SAS_VERSION`](super::SAS_VERSION); later versions add letters for the Blob service only
    /// (`docs/rules.md` §9.3).
    ///
    /// ```
    /// use table_model::sas::AccountSasPermissions;
    /// let p = AccountSasPermissions::LIST | AccountSasPermissions::READ | AccountSasPermissions::CREATE;
    /// assert_eq!(p.to_string(), "rlc");
    /// assert_eq!(AccountSasPermissions::all().to_string(), "rwdlacup");
    /// assert_eq!(AccountSasPermissions::in_order("lr")?.to_string(), "lr");
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    AccountSasPermissions in "sp" {
        /// `r`: read entities and query them.
        READ = 'r',
        /// `w`: write (insert, update, upsert) entities.
        WRITE = 'w',
        /// `d`: delete tables and entities.
        DELETE = 'd',
        /// `l`: list tables.
        LIST = 'l',
        /// `a`: add entities.
        ADD = 'a',
        /// `c`: create tables.
        CREATE = 'c',
        /// `u`: update entities.
        UPDATE = 'u',
        /// `p`: process, which the service defines for queue messages: it grants nothing on tables, but the
        /// Python SDK signs it among all permissions (`rwdlacup`), and the service takes it.
        PROCESS = 'p',
    }
}

letters! {
    /// Which resources an account SAS reaches, written in the service's order `sco`.
    ///
    /// ```
    /// use table_model::sas::AccountSasResourceTypes;
    /// let t = AccountSasResourceTypes::OBJECT | AccountSasResourceTypes::SERVICE;
    /// assert_eq!(t.to_string(), "so");
    /// assert_eq!("os".parse::<AccountSasResourceTypes>()?, t);
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    AccountSasResourceTypes in "srt" {
        /// `s`: service-level operations (properties, stats, listing tables).
        SERVICE = 's',
        /// `c`: tables (create, delete).
        CONTAINER = 'c',
        /// `o`: entities.
        OBJECT = 'o',
    }
}
