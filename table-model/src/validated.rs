//! The impls every case-sensitive validated string newtype shares (`PropertyName`, `PartitionKey`, `RowKey`).
//!
//! `Borrow<str>` is left to each type: it promises the same `Eq`/`Ord`/`Hash` as `str`.
//! Each type is `struct T(Cow<'static, str>)` with a `fn validate(&str) -> Result<(), R>` that returns the rules
//! crate's error, and an error type `E` with `E::new(R, value)` that keeps the refused value for its message
//! (built only on the error path: validating a valid value allocates nothing); `from_static` borrows the
//! literal, every other constructor goes through `validate` first.
//!
//! `value_error!` defines those error types `E`, and `TableNameError`: the rules crate's error and the refused
//! value.
//!
//! Layer: model.

macro_rules! validated_string {
    ($ty:ident, $err:ty, $what:literal) => {
        impl $ty {
            /// The value as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Converts into the owned `String`.
            pub fn into_string(self) -> ::std::string::String {
                self.0.into_owned()
            }
        }

        impl ::core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl ::core::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::core::convert::AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ::core::ops::Deref for $ty {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl ::core::cmp::PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                *self.0 == *other
            }
        }

        impl ::core::cmp::PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                *self.0 == **other
            }
        }

        impl ::core::cmp::PartialEq<$ty> for str {
            fn eq(&self, other: &$ty) -> bool {
                *self == *other.0
            }
        }

        impl ::core::cmp::PartialEq<$ty> for &str {
            fn eq(&self, other: &$ty) -> bool {
                **self == *other.0
            }
        }

        impl ::core::str::FromStr for $ty {
            type Err = $err;
            fn from_str(s: &str) -> ::core::result::Result<Self, $err> {
                Self::validate(s).map_err(|e| <$err>::new(e, s))?;
                Ok($ty(::std::borrow::Cow::Owned(s.to_owned())))
            }
        }

        impl ::core::convert::TryFrom<&str> for $ty {
            type Error = $err;
            fn try_from(s: &str) -> ::core::result::Result<Self, $err> {
                s.parse()
            }
        }

        impl ::core::convert::TryFrom<::std::string::String> for $ty {
            type Error = $err;
            fn try_from(s: ::std::string::String) -> ::core::result::Result<Self, $err> {
                // The refused string moves into the error: no copy.
                if let Err(e) = Self::validate(&s) {
                    return Err(<$err>::new(e, s));
                }
                Ok($ty(::std::borrow::Cow::Owned(s)))
            }
        }

        impl ::core::convert::From<$ty> for ::std::string::String {
            fn from(value: $ty) -> ::std::string::String {
                value.into_string()
            }
        }

        #[cfg(feature = "serde")]
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                let s = <::std::string::String as ::serde::Deserialize>::deserialize(deserializer)?;
                $ty::try_from(s).map_err(::serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use validated_string;

// The name and key errors: the rule a value broke (the rules crate's `Copy` error, which `const` code and the
// derive use) and the value itself, which the message names. The value is kept whole (`value()`); the message
// quotes it escaped and cut to 64 characters. `Debug` is the message, as `main` returning the error prints it;
// `{:#?}` shows the fields.
macro_rules! value_error {
    ($(#[$doc:meta])* $ty:ident, $rule:path, $kind:ty) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $ty {
            error: $rule,
            value: String,
        }

        impl $ty {
            pub(crate) fn new(error: $rule, value: impl Into<String>) -> Self {
                $ty { error, value: value.into() }
            }

            /// Which rule the value broke.
            pub fn kind(&self) -> $kind {
                self.error.kind()
            }

            /// The broken rule as a static message, without the value or the details of the input.
            pub fn rule(&self) -> &'static str {
                self.error.rule()
            }

            /// The refused value, whole (the message shows at most its first 64 characters).
            pub fn value(&self) -> &str {
                &self.value
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.error.with_value(&self.value), f)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if f.alternate() {
                    f.debug_struct(stringify!($ty)).field("kind", &self.kind()).field("value", &self.value).finish()
                } else {
                    fmt::Display::fmt(self, f)
                }
            }
        }

        impl std::error::Error for $ty {}
    };
}

pub(crate) use value_error;
