// Whole DataSets for the .NET -> entityworks -> .NET round trips (issue 15).
//
//   typed OUT_SCHEMA OUT_DATA [inline]
//       One DataTable with a column of every common .NET type (Boolean ... Guid, Byte[],
//       DateTime in each mode), MaxLength, Caption, DefaultValue, AutoIncrement, a key.
//       With "inline" the schema is written inside OUT_DATA (XmlWriteMode.WriteSchema).
//   shop OUT_SCHEMA OUT_DATA flat|nested [inline]
//       A DataSet "Shop": customers -> orders -> lines, two relations.
//   stock OUT_SCHEMA OUT_DATA
//       A DataSet "Depot" whose table "stock" has a composite primary key
//       (warehouse Int32, sku String) beside a plain table "depots".
//   tree OUT_SCHEMA OUT_DATA
//       A DataSet "Org" whose table "staff" refers to itself (boss_id -> id), written with
//       rows before the rows they refer to (constraints are switched off while the rows are
//       added and checked when they are switched on again), and a row that is its own boss.
//   diffgram shop|typed|table flat|nested OUT_SCHEMA BEFORE_DATA OUT_DIFFGRAM AFTER_DATA
//       The shop or the typed table (in a DataSet, or "table": a DataTable on its own),
//       written as it is (BEFORE_DATA), then changed (rows
//       modified, a key changed, rows deleted and added) and written as a DiffGram; then
//       AcceptChanges() and the result written to AFTER_DATA.
//   compare SCHEMA_A DATA_A SCHEMA_B DATA_B
//       Load both (SCHEMA "-": the schema is inline) into DataSets and compare tables,
//       columns (name, DataType, AllowDBNull, MaxLength, DateTimeMode, AutoIncrement,
//       DefaultValue, Caption), primary keys, relations and every value (rows in key order).
//       A DATA file that is a DiffGram is read with XmlReadMode.DiffGram, and its rows must
//       all be Unchanged. Differences go to stderr, one per line; the exit status is 1 if
//       there is any.
using System;
using System.Collections.Generic;
using System.Data;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Xml;

public static class DataSetInterop
{
    public static int? Run(string[] args)
    {
        if (args.Length >= 3 && args[0] == "typed")
            return Typed(args[1], args[2], args.Length > 3 && args[3] == "inline");
        if (args.Length >= 4 && args[0] == "shop")
            return WriteShop(args[1], args[2], args[3] == "nested",
                             args.Length > 4 && args[4] == "inline");
        if (args.Length == 3 && args[0] == "stock")
            return WriteStock(args[1], args[2]);
        if (args.Length == 3 && args[0] == "tree")
            return WriteTree(args[1], args[2]);
        if (args.Length == 7 && args[0] == "diffgram")
            return Diffgram(args[1], args[2] == "nested", args[3], args[4], args[5], args[6]);
        if (args.Length == 5 && args[0] == "compare")
            return Compare(args[1], args[2], args[3], args[4]);
        return null;
    }

    static void Write(DataSet ds, string schema, string data, bool inline)
    {
        if (inline)
        {
            ds.WriteXml(data, XmlWriteMode.WriteSchema);
            return;
        }
        ds.WriteXmlSchema(schema);
        ds.WriteXml(data);
    }

    static int Typed(string schema, string data, bool inline)
    {
        var t = new DataTable("typed");
        var id = t.Columns.Add("id", typeof(int));
        id.AutoIncrement = true;
        id.AutoIncrementSeed = 100;
        id.AutoIncrementStep = 5;
        id.AllowDBNull = false;
        var name = t.Columns.Add("name", typeof(string));
        name.MaxLength = 12;
        name.Caption = "Display name";
        t.Columns.Add("flag", typeof(bool)).DefaultValue = true;
        t.Columns.Add("tiny", typeof(byte));
        t.Columns.Add("signed_tiny", typeof(sbyte));
        t.Columns.Add("small", typeof(short));
        t.Columns.Add("big", typeof(long));
        t.Columns.Add("u16", typeof(ushort));
        t.Columns.Add("u32", typeof(uint));
        t.Columns.Add("u64", typeof(ulong));
        t.Columns.Add("single", typeof(float));
        t.Columns.Add("real", typeof(double));
        t.Columns.Add("price", typeof(decimal));
        t.Columns.Add("uid", typeof(Guid));
        t.Columns.Add("span", typeof(TimeSpan));
        t.Columns.Add("blob", typeof(byte[]));
        t.Columns.Add("utc", typeof(DateTime)).DateTimeMode = DataSetDateTime.Utc;
        t.Columns.Add("wall", typeof(DateTime)).DateTimeMode = DataSetDateTime.Unspecified;
        t.Columns.Add("local", typeof(DateTime));  // the default: UnspecifiedLocal
        t.PrimaryKey = new[] { id };
        var r = t.NewRow();
        r["name"] = "Ada"; r["tiny"] = (byte)255; r["signed_tiny"] = (sbyte)-128;
        r["small"] = short.MinValue; r["big"] = long.MaxValue; r["u16"] = ushort.MaxValue;
        r["u32"] = uint.MaxValue; r["u64"] = 9007199254740993UL; r["single"] = 0.1f;
        r["real"] = -0.0; r["price"] = 12.3400m; r["uid"] = new Guid("0f8fad5b-d9cb-469f-a165-70867728950e");
        r["span"] = new TimeSpan(-1, -2, -3, -4, -5); r["blob"] = new byte[] { 0, 1, 255 };
        r["utc"] = new DateTime(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc).AddTicks(1234560);
        r["wall"] = new DateTime(1999, 12, 31, 23, 0, 0, DateTimeKind.Unspecified);
        r["local"] = new DateTime(2024, 7, 1, 12, 0, 0, DateTimeKind.Local);
        t.Rows.Add(r);
        var s = t.NewRow();
        // (no NaN or infinity: SQLite refuses NaN in a nullable column, MariaDB both)
        s["name"] = ""; s["flag"] = false; s["real"] = double.Epsilon;
        s["single"] = float.MinValue;
        s["price"] = -0.5m; s["span"] = TimeSpan.Zero;
        t.Rows.Add(s);
        t.Rows.Add(t.NewRow());  // defaults and DBNull only
        var ds = new DataSet("TypedSet");
        ds.Tables.Add(t);
        Write(ds, schema, data, inline);
        return 0;
    }

    static DataSet Shop(bool nested)
    {
        var ds = new DataSet("Shop");
        var c = ds.Tables.Add("customers");
        c.Columns.Add("id", typeof(int)).AllowDBNull = false;
        c.Columns.Add("name", typeof(string));
        c.PrimaryKey = new[] { c.Columns["id"] };
        var o = ds.Tables.Add("orders");
        o.Columns.Add("order_id", typeof(int)).AllowDBNull = false;
        o.Columns.Add("customer_id", typeof(int));
        o.Columns.Add("total", typeof(decimal));
        o.Columns.Add("placed", typeof(DateTime)).DateTimeMode = DataSetDateTime.Utc;
        o.PrimaryKey = new[] { o.Columns["order_id"] };
        var l = ds.Tables.Add("lines");
        l.Columns.Add("line_id", typeof(long)).AllowDBNull = false;
        l.Columns.Add("order_id", typeof(int)).AllowDBNull = false;
        l.Columns.Add("sku", typeof(string)).MaxLength = 8;
        l.Columns.Add("qty", typeof(short));
        l.PrimaryKey = new[] { l.Columns["line_id"] };
        ds.Relations.Add("customer_orders", c.Columns["id"], o.Columns["customer_id"]).Nested = nested;
        ds.Relations.Add("order_lines", o.Columns["order_id"], l.Columns["order_id"]).Nested = nested;
        c.Rows.Add(1, "Ada"); c.Rows.Add(2, "Bob & Co <ltd>"); c.Rows.Add(3, DBNull.Value);
        var at = new DateTime(2024, 5, 1, 8, 0, 0, DateTimeKind.Utc);
        o.Rows.Add(10, 1, 9.5m, at); o.Rows.Add(11, 1, 1.25m, at.AddDays(1));
        o.Rows.Add(12, 2, 3m, DBNull.Value);
        l.Rows.Add(100L, 10, "A-1", (short)2); l.Rows.Add(101L, 10, "B-22", (short)1);
        l.Rows.Add(102L, 12, "C", DBNull.Value);
        return ds;
    }

    static int WriteShop(string schema, string data, bool nested, bool inline)
    {
        Write(Shop(nested), schema, data, inline);
        return 0;
    }

    static int WriteStock(string schema, string data)
    {
        var ds = new DataSet("Depot");
        var d = ds.Tables.Add("depots");
        d.Columns.Add("id", typeof(int)).AllowDBNull = false;
        d.Columns.Add("city", typeof(string));
        d.PrimaryKey = new[] { d.Columns["id"] };
        var s = ds.Tables.Add("stock");
        s.Columns.Add("warehouse", typeof(int)).AllowDBNull = false;
        s.Columns.Add("sku", typeof(string)).AllowDBNull = false;
        s.Columns.Add("qty", typeof(short));
        s.Columns.Add("price", typeof(decimal));
        s.PrimaryKey = new[] { s.Columns["warehouse"], s.Columns["sku"] };
        d.Rows.Add(1, "Lyon"); d.Rows.Add(2, DBNull.Value);
        s.Rows.Add(1, "A-1", (short)5, 1.50m); s.Rows.Add(1, "B-2", (short)0, 0.10m);
        s.Rows.Add(2, "A-1", DBNull.Value, 12m);
        Write(ds, schema, data, false);
        return 0;
    }

    static int WriteTree(string schema, string data)
    {
        var ds = new DataSet("Org");
        var s = ds.Tables.Add("staff");
        s.Columns.Add("id", typeof(int)).AllowDBNull = false;
        s.Columns.Add("boss_id", typeof(int));
        s.Columns.Add("name", typeof(string));
        s.PrimaryKey = new[] { s.Columns["id"] };
        ds.Relations.Add("staff_boss", s.Columns["id"], s.Columns["boss_id"]);
        ds.EnforceConstraints = false;
        s.Rows.Add(4, 3, "Dee");  // her boss, and his, come later
        s.Rows.Add(3, 2, "Cy");
        s.Rows.Add(2, 1, "Bob");
        s.Rows.Add(1, DBNull.Value, "Ada");
        s.Rows.Add(5, 5, "Eve");  // her own boss
        s.Rows.Add(6, 1, "Fay");
        ds.EnforceConstraints = true;  // every row's boss is there: no exception
        Write(ds, schema, data, false);
        return 0;
    }

    static DataSet TypedSet()
    {
        var ds = new DataSet("TypedSet");
        var t = ds.Tables.Add("typed");
        t.Columns.Add("id", typeof(int)).AllowDBNull = false;
        t.Columns.Add("name", typeof(string)).MaxLength = 12;
        t.Columns.Add("flag", typeof(bool));
        t.Columns.Add("tiny", typeof(byte));
        t.Columns.Add("signed_tiny", typeof(sbyte));
        t.Columns.Add("small", typeof(short));
        t.Columns.Add("big", typeof(long));
        t.Columns.Add("u16", typeof(ushort));
        t.Columns.Add("u32", typeof(uint));
        t.Columns.Add("u64", typeof(ulong));
        t.Columns.Add("single", typeof(float));
        t.Columns.Add("real", typeof(double));
        t.Columns.Add("price", typeof(decimal));
        t.Columns.Add("uid", typeof(Guid));
        t.Columns.Add("span", typeof(TimeSpan));
        t.Columns.Add("blob", typeof(byte[]));
        t.Columns.Add("utc", typeof(DateTime)).DateTimeMode = DataSetDateTime.Utc;
        t.Columns.Add("wall", typeof(DateTime)).DateTimeMode = DataSetDateTime.Unspecified;
        t.PrimaryKey = new[] { t.Columns["id"] };
        var at = new DateTime(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc).AddTicks(1234560);
        t.Rows.Add(1, "Ada", true, (byte)255, (sbyte)-128, short.MinValue, long.MaxValue,
                   ushort.MaxValue, uint.MaxValue, 9007199254740993UL, 0.1f, -0.0, 12.3400m,
                   new Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
                   new TimeSpan(-1, -2, -3, -4, -5), new byte[] { 0, 1, 255 }, at,
                   new DateTime(1999, 12, 31, 23, 0, 0, DateTimeKind.Unspecified));
        t.Rows.Add(2, "", false, (byte)0, (sbyte)0, (short)0, 0L, (ushort)0, 0U, 0UL,
                   float.MinValue, double.Epsilon, -0.5m, Guid.Empty, TimeSpan.Zero,
                   new byte[0], at.AddYears(-20), new DateTime(1, 1, 1));
        var empty = t.NewRow();
        empty["id"] = 3;
        t.Rows.Add(empty);
        t.Rows.Add(4, "keep", true);
        return ds;
    }

    static void ChangeTyped(DataSet ds)
    {
        var t = ds.Tables["typed"];
        var r = t.Rows.Find(1);  // every column changes
        r["name"] = "Ada L."; r["flag"] = false; r["tiny"] = (byte)1; r["signed_tiny"] = (sbyte)127;
        r["small"] = short.MaxValue; r["big"] = long.MinValue; r["u16"] = (ushort)1;
        r["u32"] = 7U; r["u64"] = (ulong)long.MaxValue; r["single"] = float.MaxValue;
        r["real"] = 1e-300; r["price"] = 0.000001m; r["uid"] = Guid.Empty;
        r["span"] = new TimeSpan(400, 0, 0, 0, 1); r["blob"] = new byte[] { 7 };
        r["utc"] = new DateTime(1, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        r["wall"] = new DateTime(9999, 12, 31, 23, 59, 59, DateTimeKind.Unspecified);
        var e = t.Rows.Find(3);  // nulls become values
        e["name"] = "was empty"; e["price"] = 79228162514264337593543950335m;
        e["real"] = double.MaxValue;
        var k = t.Rows.Find(4);  // values become nulls
        k["name"] = DBNull.Value; k["flag"] = DBNull.Value;
        t.Rows.Find(2).Delete();
        t.Rows.Add(5, "new", true, (byte)9, (sbyte)-9, (short)-9, -9L, (ushort)9, 9U, 9UL,
                   1.5f, double.MinValue, 1.10m, Guid.NewGuid(), TimeSpan.FromTicks(10),  // one microsecond: a lone tick is refused
                   new byte[] { 1, 2, 3 }, new DateTime(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc),
                   new DateTime(2000, 1, 1, 12, 0, 0, DateTimeKind.Unspecified));
    }

    static void ChangeShop(DataSet ds)
    {
        var c = ds.Tables["customers"];
        var o = ds.Tables["orders"];
        var l = ds.Tables["lines"];
        c.Rows.Find(2)["name"] = "Bob Ltd";
        c.Rows.Add(4, "Dee");
        l.Rows.Find(102L).Delete();
        o.Rows.Find(12).Delete();
        o.Rows.Add(13, 4, 7.75m, DBNull.Value);
        o.Rows.Find(11)["customer_id"] = 4;         // moves to the new customer
        o.Rows.Find(10)["order_id"] = 20;           // a key change, cascaded to its lines
        l.Rows.Add(103L, 13, "D", (short)5);
        c.Rows.Find(3).Delete();                    // a customer without orders
        c.Rows.Add(3, "Cy");                        // and a new one under the same key
    }

    static int Diffgram(string kind, bool nested, string schema, string before, string diff,
                        string after)
    {
        if (kind == "table")  // DataTable.WriteXml(..., XmlWriteMode.DiffGram), no DataSet
        {
            var set = TypedSet();
            var t = set.Tables["typed"];
            set.Tables.Remove(t);
            t.AcceptChanges();
            t.WriteXmlSchema(schema);
            t.WriteXml(before);
            var holder = new DataSet("TypedSet");
            holder.Tables.Add(t);
            ChangeTyped(holder);
            holder.Tables.Remove(t);
            t.WriteXml(diff, XmlWriteMode.DiffGram);
            t.AcceptChanges();
            t.WriteXml(after);
            return 0;
        }
        var ds = kind == "typed" ? TypedSet() : Shop(nested);
        ds.AcceptChanges();
        ds.WriteXmlSchema(schema);
        ds.WriteXml(before);
        if (kind == "typed")
            ChangeTyped(ds);
        else
            ChangeShop(ds);
        ds.WriteXml(diff, XmlWriteMode.DiffGram);
        ds.AcceptChanges();
        ds.WriteXml(after);
        return 0;
    }

    static bool IsDiffgram(string data)
    {
        using (var r = XmlReader.Create(data))
        {
            r.MoveToContent();
            return r.LocalName == "diffgram" && r.NamespaceURI == "urn:schemas-microsoft-com:xml-diffgram-v1";
        }
    }

    static DataSet Load(string schema, string data, List<string> diffs)
    {
        var ds = new DataSet();
        if (schema == "-")
        {
            ds.ReadXml(data, XmlReadMode.ReadSchema);
        }
        else if (IsDiffgram(data))
        {
            ds.ReadXmlSchema(schema);
            ds.ReadXml(data, XmlReadMode.DiffGram);
            foreach (DataTable t in ds.Tables)
                foreach (DataRow row in t.Rows)
                    if (row.RowState != DataRowState.Unchanged)
                        diffs.Add(data + ": a row of " + t.TableName + " is " + row.RowState);
        }
        else
        {
            ds.ReadXmlSchema(schema);
            ds.ReadXml(data);
        }
        return ds;
    }

    static DataRow[] Ordered(DataTable t)
    {
        if (t.PrimaryKey.Length == 0)
            return t.Rows.Cast<DataRow>().ToArray();
        return t.Select("", string.Join(",", t.PrimaryKey.Select(k => "[" + k.ColumnName + "]")));
    }

    static string Describe(DataColumn c)
    {
        return string.Join("|", new[] {
            c.ColumnName, c.DataType.FullName, "null=" + c.AllowDBNull, "max=" + c.MaxLength,
            "mode=" + c.DateTimeMode, "auto=" + c.AutoIncrement + "/" + c.AutoIncrementSeed + "/"
            + c.AutoIncrementStep, "default=" + Convert.ToString(c.DefaultValue, CultureInfo.InvariantCulture),
            "caption=" + c.Caption });
    }

    static string Cell(object value)
    {
        if (value is DBNull) return "DBNull";
        if (value is byte[]) return "bytes:" + Convert.ToBase64String((byte[])value);
        if (value is DateTime)
        {
            var d = (DateTime)value;
            return d.ToUniversalTime().Ticks + ":" + d.Kind;
        }
        if (value is double) return BitConverter.DoubleToInt64Bits((double)value).ToString();
        if (value is float) return BitConverter.DoubleToInt64Bits((float)value).ToString();
        if (value is decimal) return ((decimal)value).ToString(CultureInfo.InvariantCulture);
        return value.GetType().Name + ":" + Convert.ToString(value, CultureInfo.InvariantCulture);
    }

    static int Compare(string schemaA, string dataA, string schemaB, string dataB)
    {
        var diffs = new List<string>();
        var a = Load(schemaA, dataA, diffs);
        var b = Load(schemaB, dataB, diffs);
        Action<string, object, object> same = (what, x, y) => {
            if (!Equals(x, y)) diffs.Add(what + ": " + x + " != " + y);
        };
        same("tables", string.Join(",", a.Tables.Cast<DataTable>().Select(t => t.TableName)),
             string.Join(",", b.Tables.Cast<DataTable>().Select(t => t.TableName)));
        foreach (DataTable ta in a.Tables)
        {
            var tb = b.Tables[ta.TableName];
            if (tb == null) continue;
            same(ta.TableName + " columns",
                 string.Join(";", ta.Columns.Cast<DataColumn>().Select(Describe)),
                 string.Join(";", tb.Columns.Cast<DataColumn>().Select(Describe)));
            same(ta.TableName + " key", string.Join(",", ta.PrimaryKey.Select(k => k.ColumnName)),
                 string.Join(",", tb.PrimaryKey.Select(k => k.ColumnName)));
            same(ta.TableName + " rows", ta.Rows.Count, tb.Rows.Count);
            var ra = Ordered(ta);
            var rb = Ordered(tb);
            for (int i = 0; i < Math.Min(ra.Length, rb.Length); i++)
                foreach (DataColumn c in ta.Columns)
                    if (tb.Columns.Contains(c.ColumnName))
                        same(ta.TableName + "[" + i + "]." + c.ColumnName, Cell(ra[i][c]),
                             Cell(rb[i][c.ColumnName]));
        }
        Func<DataSet, string> relations = ds => string.Join(";", ds.Relations.Cast<DataRelation>()
            .OrderBy(r => r.RelationName)
            .Select(r => r.RelationName + ":" + r.ParentTable.TableName + "."
                    + string.Join(",", r.ParentColumns.Select(c => c.ColumnName)) + "->"
                    + r.ChildTable.TableName + "." + string.Join(",", r.ChildColumns.Select(c => c.ColumnName))
                    + (r.Nested ? " nested" : "")));
        same("relations", relations(a), relations(b));
        foreach (var d in diffs)
            Console.Error.WriteLine(d);
        return diffs.Count == 0 ? 0 : 1;
    }
}
