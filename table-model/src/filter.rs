//! `$filter` expressions (`docs/rules.md` §7.1), built from typed [`Property`] handles or from property names,
//! rendered with every literal in its exact OData form and checked against the service's rules.
//!
//! A [`Filter`] is a tree of comparisons joined by `and`, `or` and `not`. It is rendered once, by
//! [`Filter::render`], which is where every rule is checked: at most 15 comparisons, valid property names,
//! literals that have a filter form. Nothing in a value can leave its literal: strings are quoted with every
//! `'` doubled, and every other literal is made of characters that cannot end it. [`Filter::parse`] reads
//! `$filter` text into the same tree, checking the same rules, and names the position of a mistake.
//! [`Filter::expr`] lends the tree to walk, to evaluate a filter in memory or translate it.
//!
//! Typed comparisons use the property handles of `#[derive(TableEntity)]` and take values of the property's
//! type only:
//!
#![cfg_attr(feature = "derive", doc = "```")]
#![cfg_attr(not(feature = "derive"), doc = "```ignore")]
//! use table_model::filter::{self, Filter};
//! use table_model::{DateTime, TableEntity};
//!
//! #[derive(TableEntity)]
//! #[table(rename_all = "PascalCase")]
//! struct Order {
//!     #[table(partition_key)]
//!     region: String,
//!     #[table(row_key)]
//!     id: u64,
//!     price: f64,
//!     customer: String,
//!     placed: DateTime,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let order = Order::PROPERTIES;
//! let since: DateTime = "2024-01-01T00:00:00Z".parse()?;
//! let f = filter::PARTITION_KEY.eq("eu")
//!     & order.placed.ge(since)
//!     & (order.price.gt(100) | order.customer.eq("O'Brien"));
//! assert_eq!(
//!     f.render()?,
//!     "PartitionKey eq 'eu' and Placed ge datetime'2024-01-01T00:00:00.0000000Z' \
//!      and (Price gt 100.0 or Customer eq 'O''Brien')"
//! );
//! # Ok(())
//! # }
//! ```
//!
//! Comparing a property with a value of another type does not compile:
//!
#![cfg_attr(feature = "derive", doc = "```compile_fail,E0277")]
#![cfg_attr(not(feature = "derive"), doc = "```ignore")]
//! # use table_model::TableEntity;
//! # #[derive(TableEntity)]
//! # struct Order {
//! #     #[table(partition_key)]
//! #     region: String,
//! #     #[table(row_key)]
//! #     id: u64,
//! #     #[table(rename = "Price")]
//! #     price: f64,
//! # }
//! let f = Order::PROPERTIES.price.eq("100"); // a Double property compared with a string
//! ```
//!
//! Dynamic entities name their properties at run time and compare them with any [`EdmValue`]:
//!
//! ```
//! use table_model::filter::Filter;
//! let f = Filter::property("Count").ge(10i64) & !Filter::property("Tag").eq("x");
//! assert_eq!(f.render()?, "Count ge 10L and not (Tag eq 'x')");
//! # Ok::<(), table_model::FilterError>(())
//! ```
//!
//! Layer: wire.

pub(crate) mod error;
mod key_range;
mod literal;
mod parse;
mod range;

use crate::edm::datetime::DateTime;
use crate::edm::error::ValueError;
use crate::edm::{EdmBinary, EdmString, EdmValue, IntoEdm};
use crate::key::{PartitionKey, RowKey};
use crate::limits::FILTER_MAX_COMPARISONS;
use crate::name::error::PropertyNameError;
use crate::property::Property;
use crate::table_entity::TableEnum;
pub use error::Expected;
use error::{FilterError, FilterErrorKind, FilterParseError};
use std::borrow::Cow;
use std::fmt;
use std::ops::{BitAnd, BitOr, Not};
use table_model_rules::limits::SYSTEM_PROPERTIES;
use uuid::Uuid;

pub use key_range::{shard, KeyPosition, KeyRange, KeyRangeError, KeyRangeErrorKind};
use literal::write_literal;
pub use range::prefix_upper_bound;

/// The `PartitionKey` system property, compared with strings.
pub const PARTITION_KEY: Property<PartitionKey> = Property::__new("PartitionKey");
/// The `RowKey` system property, compared with strings.
pub const ROW_KEY: Property<RowKey> = Property::__new("RowKey");
/// The `Timestamp` system property (set by the server on every change), compared with [`DateTime`]s.
pub const TIMESTAMP: Property<DateTime> = Property::__new("Timestamp");

/// A comparison operator of `$filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComparisonOperator {
    /// `eq`: equal.
    Eq,
    /// `ne`: not equal.
    Ne,
    /// `gt`: greater than.
    Gt,
    /// `ge`: greater than or equal.
    Ge,
    /// `lt`: less than.
    Lt,
    /// `le`: less than or equal.
    Le,
}

impl ComparisonOperator {
    /// The operator as the service spells it (lowercase: `$filter` is case-sensitive).
    pub const fn as_str(self) -> &'static str {
        match self {
            ComparisonOperator::Eq => "eq",
            ComparisonOperator::Ne => "ne",
            ComparisonOperator::Gt => "gt",
            ComparisonOperator::Ge => "ge",
            ComparisonOperator::Lt => "lt",
            ComparisonOperator::Le => "le",
        }
    }
}

impl fmt::Display for ComparisonOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `$filter` expression: comparisons of a property with a literal, joined by `and`, `or` and `not`.
///
/// Build one with the comparison methods of a typed [`Property`] (generated by the derive), of
/// [`Filter::property`] for dynamic entities, or the range helpers; join them with [`Filter::and`] (`&`),
/// [`Filter::or`] (`|`) and `!`. [`Filter::render`] checks every rule and writes the string the service reads;
/// parentheses are added exactly where precedence (`not` over `and` over `or`) needs them, or where they help
/// a reader: an `or` inside an `and` and the operand of `not` are always parenthesised.
///
/// ```
/// use table_model::filter::Filter;
/// let a = Filter::property("A").eq(1);
/// let b = Filter::property("B").eq(2);
/// let c = Filter::property("C").eq(3);
/// assert_eq!((a.clone() | b.clone() & c.clone()).render()?, "A eq 1 or (B eq 2 and C eq 3)");
/// assert_eq!(((a.clone() | b.clone()) & c.clone()).render()?, "(A eq 1 or B eq 2) and C eq 3");
/// assert_eq!((!(a & b) | c).render()?, "not (A eq 1 and B eq 2) or C eq 3");
/// # Ok::<(), table_model::FilterError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    node: Node,
}

/// The property side of a comparison: a name checked when the filter was built, or the error it gave.
#[derive(Clone, Debug, PartialEq)]
struct Name(Result<Cow<'static, str>, FilterError>);

/// A node of the tree; the operands of `and`, `or` and `not` are filters, so that [`Filter::expr`] can lend
/// them.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Compare { property: Name, op: ComparisonOperator, value: Result<EdmValue, ValueError> },
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
}

/// The top node of a [`Filter`], borrowed from it by [`Filter::expr`]: a comparison, or `and`, `or` or `not`
/// of other filters, each walked with its own [`Filter::expr`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FilterExpr<'a> {
    /// `property op value`.
    Compare {
        /// The property's name.
        property: &'a str,
        /// The comparison.
        op: ComparisonOperator,
        /// The literal, of its exact EDM type.
        value: &'a EdmValue,
    },
    /// Every filter holds: two or more, none of them an `and` (chains are flattened).
    And(&'a [Filter]),
    /// Any of the filters holds: two or more, none of them an `or`.
    Or(&'a [Filter]),
    /// The filter does not hold; it is not a `not` (a double negation cancels out).
    Not(&'a Filter),
}

impl Filter {
    /// Starts a comparison on a property named at run time, for dynamic entities.
    ///
    /// The name must be a valid property name or one of the system properties `PartitionKey`, `RowKey`,
    /// `Timestamp`; an invalid name is reported by [`Filter::render`], so a name can never inject syntax.
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// assert_eq!(Filter::property("RowKey").lt("m").render()?, "RowKey lt 'm'");
    /// let err = Filter::property("A or B").eq(1).render().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid filter: property `A or B`: invalid property name: character U+0020 at index 1 is not allowed; \
    ///      names follow C# identifier rules (letters, digits, `_`)"
    /// );
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn property(name: impl Into<Cow<'static, str>>) -> FilterProperty {
        let name = name.into();
        let checked = match check_name(&name) {
            Ok(()) => Ok(name),
            Err(error) => Err(FilterError::new(FilterErrorKind::InvalidProperty { name: name.into_owned(), error })),
        };
        FilterProperty { name: Name(checked) }
    }

    /// Reads `$filter` text, as the service reads it, into the filter that [`Filter::render`] writes back in
    /// its canonical form (`docs/rules.md` §7.1 and §7.2).
    ///
    /// Every literal keeps its exact type: `5` is an Int32, `5L` an Int64, `5.0` and `5e0` Doubles. Chains of
    /// one operator are flattened and a double `not` cancels out, as when the filter is built in code, so
    /// `Filter::parse(&f.render()?)` is `f` for every filter that renders, and parsing then rendering gives the
    /// canonical form of the text. The rules of [`Filter::render`] are checked here already: property names,
    /// literal forms and limits, and at most 15 comparisons.
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// let f = Filter::parse("PartitionKey eq 'eu' and (Price gt 100.0 or not (Customer eq 'O''Brien'))")?;
    /// assert_eq!(f, Filter::property("PartitionKey").eq("eu")
    ///     & (Filter::property("Price").gt(100.0) | !Filter::property("Customer").eq("O'Brien")));
    /// assert_eq!(Filter::parse("((A eq 1) and B eq 2L)")?.render()?, "A eq 1 and B eq 2L");
    ///
    /// let err = Filter::parse("PartitionKey eq 'eu' and Price == 100").unwrap_err();
    /// assert_eq!(err.position(), 31);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid filter at position 31: expected a comparison operator (eq, ne, gt, ge, lt, le), found \"==\""
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`FilterParseError`], with the byte position of the problem: text that is empty or not in the grammar,
    /// an invalid property name, a literal that is malformed or breaks its type's limit, an integer beyond
    /// Int32 without the `L` of an Int64, a 16th comparison, or more than
    /// [`FILTER_MAX_NESTING`](crate::limits::FILTER_MAX_NESTING) nested parentheses and `not`s.
    pub fn parse(text: &str) -> Result<Filter, FilterParseError> {
        parse::parse(text)
    }

    /// The filter's top node, to walk its tree: to evaluate the filter on entities in memory, or to translate
    /// it. The tree is the one [`Filter::render`] writes, chains of one operator flattened into one node.
    ///
    /// ```
    /// use table_model::filter::{ComparisonOperator, Filter, FilterExpr};
    /// use table_model::{EdmValue, FilterError};
    ///
    /// /// The properties a filter compares, in order.
    /// fn properties<'a>(filter: &'a Filter, out: &mut Vec<&'a str>) -> Result<(), FilterError> {
    ///     match filter.expr()? {
    ///         FilterExpr::Compare { property, .. } => out.push(property),
    ///         FilterExpr::And(filters) | FilterExpr::Or(filters) => {
    ///             for f in filters {
    ///                 properties(f, out)?;
    ///             }
    ///         }
    ///         FilterExpr::Not(f) => properties(f, out)?,
    ///         _ => {}
    ///     }
    ///     Ok(())
    /// }
    ///
    /// let f = Filter::parse("PartitionKey eq 'eu' and (Price gt 100.0 or not (Customer eq 'O''Brien'))")?;
    /// let mut compared = Vec::new();
    /// properties(&f, &mut compared)?;
    /// assert_eq!(compared, ["PartitionKey", "Price", "Customer"]);
    ///
    /// let price = Filter::parse("Price gt 100.0")?;
    /// assert_eq!(
    ///     price.expr()?,
    ///     FilterExpr::Compare { property: "Price", op: ComparisonOperator::Gt, value: &EdmValue::Double(100.0) }
    /// );
    /// assert!(Filter::property("A or B").eq(1).expr().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// For a comparison built with an invalid property name or a value that broke its EDM limit, the
    /// [`FilterError`] [`Filter::render`] reports for it; never for a filter of [`Filter::parse`]. The
    /// operands of `and`, `or` and `not` are checked when their own `expr` is called.
    pub fn expr(&self) -> Result<FilterExpr<'_>, FilterError> {
        Ok(match &self.node {
            Node::Compare { property, op, value } => {
                let name = property.0.as_ref().map_err(Clone::clone)?;
                let value = value
                    .as_ref()
                    .map_err(|e| FilterError::new(FilterErrorKind::InvalidValue(e.clone().in_property(&**name))))?;
                FilterExpr::Compare { property: name, op: *op, value }
            }
            Node::And(filters) => FilterExpr::And(filters),
            Node::Or(filters) => FilterExpr::Or(filters),
            Node::Not(filter) => FilterExpr::Not(filter),
        })
    }

    /// Both filters: `self and other`.
    #[must_use]
    pub fn and(self, other: Filter) -> Filter {
        Filter { node: join(self, other, true) }
    }

    /// Either filter: `self or other`.
    #[must_use]
    pub fn or(self, other: Filter) -> Filter {
        Filter { node: join(self, other, false) }
    }

    /// All the filters joined by `and`; `None` when there are none.
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// let f = Filter::all((1..=3).map(|i| Filter::property("N").ne(i))).unwrap();
    /// assert_eq!(f.render()?, "N ne 1 and N ne 2 and N ne 3");
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn all(filters: impl IntoIterator<Item = Filter>) -> Option<Filter> {
        filters.into_iter().reduce(Filter::and)
    }

    /// Any of the filters, joined by `or`; `None` when there are none.
    pub fn any(filters: impl IntoIterator<Item = Filter>) -> Option<Filter> {
        filters.into_iter().reduce(Filter::or)
    }

    /// The number of discrete comparisons, which the service limits to 15.
    pub fn comparisons(&self) -> usize {
        self.node.comparisons()
    }

    /// Renders the `$filter` string, unencoded (the request builder percent-encodes it).
    ///
    /// # Errors
    /// [`FilterError`] for more than 15 comparisons ([`FilterErrorKind::TooManyComparisons`]), an invalid
    /// property name, a value that broke its EDM limit when it was converted, or a NaN or infinite Double,
    /// which has no filter literal ([`FilterErrorKind::NonFiniteDouble`]).
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// let f = Filter::any((0..16).map(|i| Filter::property("N").eq(i))).unwrap();
    /// assert_eq!(
    ///     f.render().unwrap_err().to_string(),
    ///     "invalid filter: at most 15 comparisons are allowed, found 16"
    /// );
    /// assert!(Filter::property("X").eq(f64::NAN).render().is_err());
    /// ```
    pub fn render(&self) -> Result<String, FilterError> {
        let count = self.comparisons();
        if count > FILTER_MAX_COMPARISONS {
            return Err(FilterError::new(FilterErrorKind::TooManyComparisons { count }));
        }
        let mut out = String::new();
        self.write(&mut out)?;
        Ok(out)
    }

    fn compare(property: Name, op: ComparisonOperator, value: Result<EdmValue, ValueError>) -> Filter {
        Filter { node: Node::Compare { property, op, value } }
    }
}

impl std::str::FromStr for Filter {
    type Err = FilterParseError;

    /// [`Filter::parse`].
    fn from_str(text: &str) -> Result<Filter, FilterParseError> {
        Filter::parse(text)
    }
}

/// Checks the name of a filtered property: a valid property name or one of the system properties.
fn check_name(name: &str) -> Result<(), PropertyNameError> {
    if SYSTEM_PROPERTIES.contains(&name) {
        return Ok(());
    }
    table_model_rules::property_name::check(name).map_err(|error| PropertyNameError::new(error, name))
}

/// Joins two filters, flattening chains of the same operator so that `a and b and c` needs no parentheses.
fn join(left: Filter, right: Filter, and: bool) -> Node {
    let mut items = Vec::new();
    for filter in [left, right] {
        match filter.node {
            Node::And(children) if and => items.extend(children),
            Node::Or(children) if !and => items.extend(children),
            node => items.push(Filter { node }),
        }
    }
    if and {
        Node::And(items)
    } else {
        Node::Or(items)
    }
}

impl Node {
    fn comparisons(&self) -> usize {
        match self {
            Node::Compare { .. } => 1,
            Node::And(children) | Node::Or(children) => children.iter().map(Filter::comparisons).sum(),
            Node::Not(child) => child.comparisons(),
        }
    }
}

impl Filter {
    /// Appends the filter's text to `out`, each comparison checked by [`Filter::expr`].
    fn write(&self, out: &mut String) -> Result<(), FilterError> {
        match self.expr()? {
            FilterExpr::Compare { property, op, value } => {
                out.push_str(property);
                out.push(' ');
                out.push_str(op.as_str());
                out.push(' ');
                write_literal(out, value).map_err(|value| {
                    FilterError::new(FilterErrorKind::NonFiniteDouble { property: property.to_owned(), value })
                })
            }
            FilterExpr::And(children) | FilterExpr::Or(children) => {
                let and = matches!(self.node, Node::And(_));
                for (i, child) in children.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if and { " and " } else { " or " });
                    }
                    // `not` binds tighter than both; a comparison needs nothing; a nested chain (necessarily of
                    // the other operator, since chains are flattened) is parenthesised.
                    if matches!(child.node, Node::And(_) | Node::Or(_)) {
                        out.push('(');
                        child.write(out)?;
                        out.push(')');
                    } else {
                        child.write(out)?;
                    }
                }
                Ok(())
            }
            FilterExpr::Not(child) => {
                out.push_str("not (");
                child.write(out)?;
                out.push(')');
                Ok(())
            }
        }
    }
}

impl Not for Filter {
    type Output = Filter;

    /// `not (self)`; a double negation cancels out.
    fn not(self) -> Filter {
        match self.node {
            Node::Not(inner) => *inner,
            node => Filter { node: Node::Not(Box::new(Filter { node })) },
        }
    }
}

impl BitAnd for Filter {
    type Output = Filter;

    /// [`Filter::and`].
    fn bitand(self, rhs: Filter) -> Filter {
        self.and(rhs)
    }
}

impl BitOr for Filter {
    type Output = Filter;

    /// [`Filter::or`].
    fn bitor(self, rhs: Filter) -> Filter {
        self.or(rhs)
    }
}

/// A property named at run time, from [`Filter::property`]: its comparison methods take any value that
/// converts into an [`EdmValue`], whose EDM type decides the literal form.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterProperty {
    name: Name,
}

macro_rules! comparisons {
    ($($(#[$doc:meta])* $method:ident => $op:ident,)*) => {
        impl FilterProperty {
            $(
                $(#[$doc])*
                pub fn $method(&self, value: impl IntoEdm) -> Filter {
                    Filter::compare(self.name.clone(), ComparisonOperator::$op, value.into_edm())
                }
            )*
        }

        impl<T: FilterLiteral> Property<T> {
            $(
                $(#[$doc])*
                pub fn $method(&self, value: impl FilterOperand<T>) -> Filter {
                    Filter::compare(Name(Ok(Cow::Borrowed(self.name()))), ComparisonOperator::$op, value.into_operand())
                }
            )*
        }
    };
}

comparisons! {
    /// `property eq value`.
    eq => Eq,
    /// `property ne value`.
    ne => Ne,
    /// `property gt value`.
    gt => Gt,
    /// `property ge value`.
    ge => Ge,
    /// `property lt value`.
    lt => Lt,
    /// `property le value`.
    le => Le,
}

impl FilterProperty {
    /// Any string that starts with `prefix`: `property ge 'prefix' and property lt '<next>'` (see
    /// [`prefix_upper_bound`]); a single `ge` when no string is above every extension of the prefix.
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// assert_eq!(Filter::property("Tag").starts_with("ab").render()?, "Tag ge 'ab' and Tag lt 'ac'");
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn starts_with(&self, prefix: &str) -> Filter {
        range::prefix_filter(&self.name, prefix)
    }
}

impl<T: StringLiteral> Property<T> {
    /// Any value that starts with `prefix`, as [`FilterProperty::starts_with`]: the key prefix range of
    /// `docs/rules.md` §7.5, exact for any last character.
    ///
    /// ```
    /// use table_model::filter;
    /// assert_eq!(
    ///     filter::ROW_KEY.starts_with("2024-05").render()?,
    ///     "RowKey ge '2024-05' and RowKey lt '2024-06'"
    /// );
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn starts_with(&self, prefix: &str) -> Filter {
        range::prefix_filter(&Name(Ok(Cow::Borrowed(self.name()))), prefix)
    }
}

/// A Rust type that can be the type of a filtered property: it fixes the EDM type of the literal.
///
/// Implemented for the types the derive maps to EDM types and for `Option` of them. For a type of your own,
/// implement it together with [`FilterOperand`] for the values it may be compared with.
pub trait FilterLiteral {
    /// The EDM type a value of this property is compared as; `None` for an [`EdmValue`] property, which
    /// holds any type and compares with a value of any type.
    const EDM_TYPE: Option<table_model_rules::EdmType>;
}

/// A value that may be compared with a property of type `T`, converted to the literal of `T`'s EDM type.
///
/// A value of another EDM type does not implement it, so the comparison does not compile. Integers convert
/// to wider properties losslessly (an `i32` compared with an Int64 property is written `5L`).
#[diagnostic::on_unimplemented(
    message = "a property of type `{T}` cannot be compared with `{Self}`",
    label = "not a value of the property's type",
    note = "a filter literal has the property's EDM type; for a comparison chosen at run time use `Filter::property(name)`"
)]
pub trait FilterOperand<T: FilterLiteral> {
    /// The literal's value.
    ///
    /// # Errors
    /// When the value breaks its EDM type's limit (reported by [`Filter::render`]).
    fn into_operand(self) -> Result<EdmValue, ValueError>;
}

/// A [`FilterLiteral`] compared as a string, for which [`Property::starts_with`] exists.
pub trait StringLiteral: FilterLiteral {}

macro_rules! literal {
    ($edm:ident: $($target:ty),* $(,)?) => {
        $(impl FilterLiteral for $target {
            const EDM_TYPE: Option<table_model_rules::EdmType> = Some(table_model_rules::EdmType::$edm);
        })*
    };
}

literal!(String: String, EdmString, PartitionKey, RowKey);
literal!(Int32: i8, i16, i32, u8, u16);
literal!(Int64: i64, u32);
literal!(Double: f64, f32);
literal!(Boolean: bool);
literal!(Guid: Uuid);
literal!(DateTime: DateTime, chrono::DateTime<chrono::Utc>);
literal!(Binary: Vec<u8>, EdmBinary);

impl<T: FilterLiteral> FilterLiteral for Option<T> {
    const EDM_TYPE: Option<table_model_rules::EdmType> = T::EDM_TYPE;
}

/// A `#[derive(TableEnum)]` enum is stored, and compared, as its variant name.
impl<E: TableEnum> FilterLiteral for E {
    const EDM_TYPE: Option<table_model_rules::EdmType> = Some(table_model_rules::EdmType::String);
}

/// A property that holds any EDM type compares with a value of any type; the value's type decides the literal.
impl FilterLiteral for EdmValue {
    const EDM_TYPE: Option<table_model_rules::EdmType> = None;
}

impl<V: IntoEdm> FilterOperand<EdmValue> for V {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        self.into_edm()
    }
}

impl<E: TableEnum> FilterOperand<E> for E {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        string(self.as_str())
    }
}

impl<E: TableEnum> FilterOperand<E> for &E {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        string(self.as_str())
    }
}

impl StringLiteral for String {}
impl StringLiteral for EdmString {}
impl StringLiteral for PartitionKey {}
impl StringLiteral for RowKey {}
impl<T: StringLiteral> StringLiteral for Option<T> {}

/// A property of type `Option<T>` compares with the values a `T` property takes.
impl<T: FilterLiteral, V: FilterOperand<T>> FilterOperand<Option<T>> for V {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        self.into_operand()
    }
}

macro_rules! operand {
    ($($target:ty: [$($source:ty),*] => |$v:ident| $convert:expr;)*) => {
        $($(impl FilterOperand<$target> for $source {
            // One conversion serves several source types: for some it is the identity.
            #[allow(clippy::needless_borrow, clippy::useless_conversion, clippy::redundant_slicing)]
            fn into_operand(self) -> Result<EdmValue, ValueError> {
                let $v = self;
                $convert
            }
        })*)*
    };
}

fn string(value: &str) -> Result<EdmValue, ValueError> {
    EdmValue::try_from(value)
}

operand! {
    String: [&str, String, &String, EdmString, &EdmString, PartitionKey, &PartitionKey, RowKey, &RowKey]
        => |v| string(&v);
    EdmString: [&str, String, &String, EdmString, &EdmString] => |v| string(&v);
    PartitionKey: [&str, String, &String, PartitionKey, &PartitionKey] => |v| string(&v);
    RowKey: [&str, String, &String, RowKey, &RowKey] => |v| string(&v);
    i32: [i32, i16, i8, u16, u8] => |v| Ok(EdmValue::Int32(v.into()));
    i16: [i16, i8, u8] => |v| Ok(EdmValue::Int32(v.into()));
    i8: [i8] => |v| Ok(EdmValue::Int32(v.into()));
    u16: [u16, u8] => |v| Ok(EdmValue::Int32(v.into()));
    u8: [u8] => |v| Ok(EdmValue::Int32(v.into()));
    i64: [i64, i32, u32, i16, u16, i8, u8] => |v| Ok(EdmValue::Int64(v.into()));
    u32: [u32, u16, u8] => |v| Ok(EdmValue::Int64(v.into()));
    f64: [f64, f32, i32] => |v| Ok(EdmValue::Double(v.into()));
    f32: [f32] => |v| Ok(EdmValue::Double(v.into()));
    bool: [bool] => |v| Ok(EdmValue::Boolean(v));
    Uuid: [Uuid] => |v| Ok(EdmValue::Guid(v));
    Uuid: [&Uuid] => |v| Ok(EdmValue::Guid(*v));
    DateTime: [DateTime] => |v| Ok(EdmValue::DateTime(v));
    DateTime: [&DateTime] => |v| Ok(EdmValue::DateTime(*v));
    DateTime: [chrono::DateTime<chrono::Utc>] => |v| DateTime::from_chrono(v).map(EdmValue::DateTime);
    chrono::DateTime<chrono::Utc>: [chrono::DateTime<chrono::Utc>] => |v| DateTime::from_chrono(v).map(EdmValue::DateTime);
    chrono::DateTime<chrono::Utc>: [DateTime] => |v| Ok(EdmValue::DateTime(v));
    chrono::DateTime<chrono::Utc>: [&DateTime] => |v| Ok(EdmValue::DateTime(*v));
    Vec<u8>: [&[u8], Vec<u8>, &Vec<u8>, EdmBinary, &EdmBinary] => |v| EdmValue::try_from(&v[..]);
    EdmBinary: [&[u8], Vec<u8>, &Vec<u8>, EdmBinary, &EdmBinary] => |v| EdmValue::try_from(&v[..]);
}

impl<const N: usize> FilterOperand<Vec<u8>> for &[u8; N] {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(&self[..])
    }
}

impl<const N: usize> FilterOperand<EdmBinary> for &[u8; N] {
    fn into_operand(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(&self[..])
    }
}

#[cfg(test)]
mod tests;
