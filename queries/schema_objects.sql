-- schema_objects: what `tracehouse schema` lists: the warehouse's tables,
-- views and macros with the descriptions migrations and the SQL library
-- give them (COMMENT ON), and the columns of one of them.
--
-- Objects whose name starts with `_` are internal and left out. A
-- read-only command on a warehouse whose SQL library is older than the
-- binary makes the library's macros and views temporary copies on its
-- connections, with the library's descriptions: a view or macro with a
-- temporary copy is listed as that copy (the one every query of the
-- connection uses), others as stored. Tables are never temporary here.
--
-- Parameters:
--   $object  NULL: one row per table, view and macro; a name: one row per
--            column of that table or view (or per parameter of that macro)
--
-- Columns:
--   kind         table | view | macro | table macro (object rows);
--                column | parameter (rows of one object)
--   name         the object's name, or the column's / parameter's
--   type         the column's DuckDB type; a macro's parameter list; NULL
--                otherwise
--   description  the comment, '' when there is none
-- Sorted by kind (tables, views, table macros, macros), then name; columns
-- in table order.
-- The macros, read from duckdb_functions() once: it lists every built-in
-- function too, and reading it for each of the three uses below was an
-- eighth of a `schema` command's CPU.
WITH macros AS MATERIALIZED (
    SELECT database_name, function_name, function_type, parameters, comment
    FROM duckdb_functions()
    WHERE database_name IN (current_database(), 'temp') AND schema_name = 'main' AND NOT internal
      AND function_type IN ('macro', 'table_macro')
),
objects AS (
    SELECT 'table' AS kind, table_name AS name, NULL::VARCHAR AS type,
           coalesce(comment, '') AS description, 0 AS ord
    FROM duckdb_tables() WHERE schema_name = 'main' AND NOT internal AND NOT temporary
    UNION ALL
    SELECT 'view', view_name, NULL, coalesce(comment, ''), 1
    FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal
      AND database_name IN (current_database(), 'temp')
    QUALIFY rank() OVER (PARTITION BY view_name ORDER BY temporary DESC) = 1
    UNION ALL
    SELECT CASE function_type WHEN 'table_macro' THEN 'table macro' ELSE 'macro' END,
           function_name, '(' || array_to_string(parameters, ', ') || ')',
           coalesce(comment, ''),
           CASE function_type WHEN 'table_macro' THEN 2 ELSE 3 END
    FROM macros
    QUALIFY rank() OVER (PARTITION BY function_name ORDER BY database_name = 'temp' DESC) = 1
),
-- the database $object is listed from: its temporary copy when it has one
home AS (
    SELECT coalesce(max(database_name) FILTER (WHERE database_name = 'temp'), current_database()) AS db
    FROM (SELECT database_name FROM duckdb_views() WHERE view_name = $object
          UNION ALL
          SELECT database_name FROM macros WHERE function_name = $object)
),
members AS (
    SELECT 'column' AS kind, column_name AS name, data_type AS type,
           coalesce(comment, '') AS description, column_index AS ord
    FROM duckdb_columns(), home
    WHERE database_name = home.db AND schema_name = 'main' AND NOT internal
      AND table_name = $object
    UNION ALL
    SELECT 'parameter', p.name, NULL, '', p.i
    FROM macros f, home,
         unnest(f.parameters) WITH ORDINALITY AS p(name, i)
    WHERE f.database_name = home.db AND f.function_name = $object
)
SELECT kind, name, type, description
FROM (
    SELECT * FROM objects WHERE $object IS NULL AND NOT starts_with(name, '_')
    UNION ALL
    SELECT * FROM members WHERE $object IS NOT NULL
)
ORDER BY ord, name
