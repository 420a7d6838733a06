//! The errors of table names and property names: the rule a name broke, and the name.

use crate::validated::value_error;
use std::fmt;

pub use table_model_rules::{PropertyNameErrorKind, TableNameErrorKind};

value_error!(
    /// The error for an invalid table name: the rule it broke and the name, which the message quotes.
    ///
    /// ```
    /// use table_model::{TableName, TableNameErrorKind};
    /// let err = "audit-log".parse::<TableName>().unwrap_err();
    /// assert_eq!(err.kind(), TableNameErrorKind::Char { ch: '-', index: 5 });
    /// assert_eq!(err.value(), "audit-log");
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid table name \"audit-log\": character `-` at index 5 is not allowed; use ASCII letters and digits only"
    /// );
    /// // `Debug`, what `main` prints for an `Err`, is the message.
    /// assert_eq!(format!("{err:?}"), err.to_string());
    /// assert_eq!(err.rule(), "invalid table name: must contain only ASCII letters and digits");
    /// ```
    TableNameError,
    table_model_rules::TableNameError,
    TableNameErrorKind
);

value_error!(
    /// The error for an invalid property name: the rule it broke and the name, which the message quotes.
    ///
    /// ```
    /// use table_model::{PropertyName, PropertyNameErrorKind};
    /// let err = PropertyName::new("Rowkey").unwrap_err();
    /// assert_eq!(err.kind(), PropertyNameErrorKind::Reserved { system: "RowKey" });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid property name \"Rowkey\": `RowKey` is a system property; a custom property cannot take that \
    ///      name in any case"
    /// );
    /// assert_eq!(format!("{err:?}"), err.to_string());
    /// ```
    PropertyNameError,
    table_model_rules::PropertyNameError,
    PropertyNameErrorKind
);

impl PropertyNameError {
    /// The message without the name, for errors that name the property themselves.
    pub(crate) fn without_value(&self) -> &table_model_rules::PropertyNameError {
        &self.error
    }
}
