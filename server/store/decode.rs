//! Reading stored text back into the engine's types (states, kinds). A value outside the
//! vocabulary, written by another version or by hand, is an error that names the table, the
//! row, the column and the value, logged where it is read; never a guess such as `unverifiable`.

use serde::de::DeserializeOwned;
use std::fmt;
use std::str::FromStr;

/// Characters of a bad stored value kept in its error.
const SHOWN_OF_A_BAD_VALUE: usize = 200;

/// A stored value that does not read back as one fleetglass writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadStoredValue {
    pub table: &'static str,
    /// The row's id (`cluster/Kind/namespace/name` for objects).
    pub row: String,
    pub column: &'static str,
    pub value: String,
}

impl fmt::Display for BadStoredValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} row {}: {} {:?} is not a value fleetglass writes",
            self.table, self.row, self.column, self.value
        )
    }
}

impl std::error::Error for BadStoredValue {}

/// One row of `table`, named by `id` (its integer id, or its key columns as [`Key`]), which
/// is formatted only when a value is bad.
pub(crate) struct Stored<I> {
    table: &'static str,
    id: I,
}

impl<I: fmt::Display> Stored<I> {
    pub fn new(table: &'static str, id: I) -> Stored<I> {
        Stored { table, id }
    }

    /// A column's text as its type: written exactly as the type writes itself (`Display`), so
    /// nothing loosely spelled is taken either.
    pub fn parsed<T: FromStr + fmt::Display>(
        &self,
        column: &'static str,
        text: &str,
    ) -> Result<T, sqlx::Error> {
        match text.parse::<T>() {
            Ok(value) if value.to_string() == text => Ok(value),
            _ => Err(self.bad(column, text)),
        }
    }

    /// A JSON column's text as the type fleetglass writes there (a list of ids, say).
    pub fn json<T: DeserializeOwned>(
        &self,
        column: &'static str,
        text: &str,
    ) -> Result<T, sqlx::Error> {
        serde_json::from_str(text).map_err(|_| self.bad(column, text))
    }

    fn bad(&self, column: &'static str, text: &str) -> sqlx::Error {
        // A JSON column can hold hundreds of kilobytes: its start says enough.
        let value: String = text.chars().take(SHOWN_OF_A_BAD_VALUE).collect();
        let bad = BadStoredValue {
            table: self.table,
            row: self.id.to_string(),
            column,
            value,
        };
        tracing::error!(table = bad.table, row = %bad.row, column, value = %bad.value, "stored value cannot be read");
        sqlx::Error::ColumnDecode {
            index: column.to_string(),
            source: Box::new(bad),
        }
    }

    /// The same for a column that may be NULL.
    pub fn parsed_optional<T: FromStr + fmt::Display>(
        &self,
        column: &'static str,
        text: Option<&str>,
    ) -> Result<Option<T>, sqlx::Error> {
        text.map(|text| self.parsed(column, text)).transpose()
    }
}

/// A row's key columns as stored, joined with `/` (`cluster/Kind/namespace/name` for objects).
pub(super) struct Key<'r, const N: usize>(pub [&'r str; N]);

impl<const N: usize> fmt::Display for Key<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("/"))
    }
}
