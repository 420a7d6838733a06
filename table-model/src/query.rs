//! Query options (`docs/rules.md` §7): `$filter`, `$select` and `$top`, checked and rendered independently of
//! any HTTP client.
//!
//! Layer: wire.

pub(crate) mod error;

use crate::filter::Filter;
use crate::limits::QUERY_MAX_TOP;
use crate::name::error::PropertyNameError;
use crate::property::Property;
use crate::table_entity::Schema;
use error::{QueryError, QueryErrorKind};
use std::borrow::Cow;
use table_model_rules::limits::SYSTEM_PROPERTIES;

/// The options of a query of entities (or of tables): a [`Filter`], the properties to return, and the page
/// size. Every rule is checked by [`Query::render`], before anything is sent.
///
/// ```
/// use table_model::filter::{self, Filter};
/// use table_model::Query;
/// let q = Query::new()
///     .filter(filter::PARTITION_KEY.eq("p1") & Filter::property("Age").ge(18))
///     .select(["Name", "Age"])
///     .top(100);
/// assert_eq!(
///     q.render()?,
///     [
///         ("$filter", "PartitionKey eq 'p1' and Age ge 18".to_owned()),
///         ("$select", "PartitionKey,RowKey,Name,Age".to_owned()),
///         ("$top", "100".to_owned()),
///     ]
/// );
/// # Ok::<(), table_model::QueryError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    filter: Option<Filter>,
    select: Vec<Cow<'static, str>>,
    top: Option<usize>,
}

impl Query {
    /// A query with no options: every entity, every property, pages of the service's size (at most 1000).
    pub fn new() -> Self {
        Query::default()
    }

    /// Sets the filter (replacing any earlier one; join filters with [`Filter::and`] first).
    #[must_use]
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Adds properties to `$select`. When none are selected, the service returns every property.
    ///
    /// `PartitionKey` and `RowKey` are always selected with them: every entity read carries its keys. Each
    /// name must be a valid property name or a system property (`PartitionKey`, `RowKey`, `Timestamp`),
    /// checked by [`Query::render`]; a name given twice is sent once.
    #[must_use]
    pub fn select<S: Into<Cow<'static, str>>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.select.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds a typed property to `$select`.
    ///
    /// ```
    /// use table_model::{filter, Query};
    /// let q = Query::new().select_property(filter::ROW_KEY).select_property(filter::TIMESTAMP);
    /// assert_eq!(q.render()?, [("$select", "PartitionKey,RowKey,Timestamp".to_owned())]);
    /// # Ok::<(), table_model::QueryError>(())
    /// ```
    #[must_use]
    pub fn select_property<T>(mut self, property: Property<T>) -> Self {
        self.select.push(Cow::Borrowed(property.name()));
        self
    }

    /// Adds the properties of a `#[derive(TableEntity)]` struct to `$select`: `PartitionKey`, `RowKey`,
    /// `Timestamp` and every stored property, so that the struct can be read from the result.
    ///
    #[cfg_attr(feature = "derive", doc = "```")]
    #[cfg_attr(not(feature = "derive"), doc = "```ignore")]
    /// use table_model::{Query, TableEntity};
    /// #[derive(TableEntity)]
    /// struct Reading {
    ///     #[table(partition_key)]
    ///     sensor: String,
    ///     #[table(row_key)]
    ///     at: u64,
    ///     #[table(rename = "Celsius")]
    ///     celsius: f64,
    /// }
    /// let q = Query::new().select_schema(&Reading::SCHEMA);
    /// assert_eq!(q.render()?, [("$select", "PartitionKey,RowKey,Timestamp,Celsius".to_owned())]);
    /// # Ok::<(), table_model::QueryError>(())
    /// ```
    #[must_use]
    pub fn select_schema(mut self, schema: &Schema) -> Self {
        self.select.extend(SYSTEM_PROPERTIES.iter().map(|&n| Cow::Borrowed(n)));
        self.select.extend(schema.properties().map(|p| Cow::Owned(p.name().to_owned())));
        self
    }

    /// Sets `$top`, the most entities one page returns: 1 to 1000, checked by [`Query::render`]. A query
    /// still follows continuations to further pages.
    #[must_use]
    pub fn top(mut self, top: usize) -> Self {
        self.top = Some(top);
        self
    }

    /// The filter, if one is set.
    pub fn filter_ref(&self) -> Option<&Filter> {
        self.filter.as_ref()
    }

    /// The `$top`, if one is set.
    pub fn top_value(&self) -> Option<usize> {
        self.top
    }

    /// Checks every option and renders the query parameters in the order `$filter`, `$select`, `$top`,
    /// unencoded (the request builder percent-encodes them).
    ///
    /// # Errors
    /// [`QueryError`]: the filter's own errors, a `$top` outside 1 to 1000, an invalid `$select` name.
    pub fn render(&self) -> Result<Vec<(&'static str, String)>, QueryError> {
        let mut params = Vec::with_capacity(3);
        if let Some(filter) = &self.filter {
            params.push(("$filter", filter.render()?));
        }
        if !self.select.is_empty() {
            let mut names: Vec<&str> = vec!["PartitionKey", "RowKey"];
            for name in &self.select {
                if !SYSTEM_PROPERTIES.contains(&&**name) {
                    table_model_rules::property_name::check(name).map_err(|error| {
                        let error = PropertyNameError::new(error, &**name);
                        QueryError::new(QueryErrorKind::InvalidSelect { name: name.to_string(), error })
                    })?;
                }
                if !names.contains(&&**name) {
                    names.push(name);
                }
            }
            params.push(("$select", names.join(",")));
        }
        if let Some(top) = self.top {
            if !(1..=QUERY_MAX_TOP).contains(&top) {
                return Err(QueryError::new(QueryErrorKind::TopOutOfRange { top }));
            }
            params.push(("$top", top.to_string()));
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_bounds() {
        assert_eq!(Query::new().top(1).render().unwrap(), [("$top", "1".to_owned())]);
        assert_eq!(Query::new().top(1000).render().unwrap(), [("$top", "1000".to_owned())]);
        assert_eq!(Query::new().top(0).render().unwrap_err().kind(), &QueryErrorKind::TopOutOfRange { top: 0 });
        assert_eq!(Query::new().top(1001).render().unwrap_err().kind(), &QueryErrorKind::TopOutOfRange { top: 1001 });
    }

    #[test]
    fn select_checks_names() {
        assert!(Query::new().render().unwrap().is_empty());
        let q = Query::new().select(["Name", "Timestamp", "RowKey", "Name"]);
        assert_eq!(q.render().unwrap(), [("$select", "PartitionKey,RowKey,Name,Timestamp".to_owned())]);
        let err = Query::new().select(["Name", "A,B"]).render().unwrap_err();
        assert!(matches!(err.kind(), QueryErrorKind::InvalidSelect { name, .. } if name == "A,B"));
        assert!(err.to_string().starts_with("invalid query: $select `A,B`: invalid property name: character `,`"));
        // System names are accepted only exactly: `rowkey` is a custom name, and a reserved one.
        assert!(Query::new().select(["rowkey"]).render().is_err());
    }

    #[test]
    fn filter_errors_pass_through() {
        let f = Filter::any((0..16).map(|i| Filter::property("N").eq(i))).unwrap();
        let err = Query::new().filter(f).render().unwrap_err();
        assert!(matches!(err.kind(), QueryErrorKind::Filter(_)));
        assert_eq!(err.to_string(), "invalid filter: at most 15 comparisons are allowed, found 16");
    }
}
