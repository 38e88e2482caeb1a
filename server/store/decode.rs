//! Reading stored text back into the engine's types (states, kinds). A value outside the
//! vocabulary, written by another version or by hand, is an error that names the table, the
//! row, the column and the value, logged where it is read; never a guess such as `unverifiable`.

use sqlx::Row;
use sqlx::postgres::PgRow;
use std::fmt;
use std::str::FromStr;

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

/// One row of `table`, identified by `id` (asked only when a value is bad).
pub(super) struct Stored<'r, I> {
    pub table: &'static str,
    pub row: &'r PgRow,
    pub id: I,
}

impl<I: Fn(&PgRow) -> String> Stored<'_, I> {
    /// The column as its type: written exactly as the type writes itself (`Display`), so
    /// nothing loosely spelled is taken either.
    pub fn parsed<T: FromStr + fmt::Display>(
        &self,
        column: &'static str,
    ) -> Result<T, sqlx::Error> {
        let text: String = self.row.try_get(column)?;
        self.read(column, text)
    }

    /// The same for a column that may be NULL.
    pub fn parsed_optional<T: FromStr + fmt::Display>(
        &self,
        column: &'static str,
    ) -> Result<Option<T>, sqlx::Error> {
        let text: Option<String> = self.row.try_get(column)?;
        text.map(|text| self.read(column, text)).transpose()
    }

    fn read<T: FromStr + fmt::Display>(
        &self,
        column: &'static str,
        text: String,
    ) -> Result<T, sqlx::Error> {
        match text.parse::<T>() {
            Ok(value) if value.to_string() == text => Ok(value),
            _ => {
                let bad = BadStoredValue {
                    table: self.table,
                    row: (self.id)(self.row),
                    column,
                    value: text,
                };
                tracing::error!(table = bad.table, row = %bad.row, column, value = %bad.value, "stored value cannot be read");
                Err(sqlx::Error::ColumnDecode {
                    index: column.to_string(),
                    source: Box::new(bad),
                })
            }
        }
    }
}

/// A text column as stored, for naming a row in an error (`?` if it cannot be read).
pub(super) fn text(row: &PgRow, column: &str) -> String {
    row.try_get(column).unwrap_or_else(|_| "?".to_string())
}

/// An object row's id, from its key columns as stored.
pub(super) fn object_id(row: &PgRow) -> String {
    ["cluster", "kind", "namespace", "name"]
        .map(|column| text(row, column))
        .join("/")
}
