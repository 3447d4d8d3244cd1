// Exercises Mono's System.Data against entityworks' XML + XSD files.
//
//   load  SCHEMA DATA DUMP OUT_SCHEMA OUT_DATA
//       ReadXmlSchema + ReadXml into a DataTable, describe its columns, key and typed
//       values in DUMP (for the Python test to compare), then write the table back with
//       WriteXmlSchema / WriteXml.
//   build OUT_SCHEMA OUT_DATA
//       Build a typed DataTable here, fill it and write it, for entityworks to import.
//   build-local OUT_SCHEMA OUT_DATA
//       A DataTable whose DateTime columns keep .NET's default mode (UnspecifiedLocal) and
//       Local: their values are written with the local offset of the TZ it runs in.
//
// Values in DUMP are XmlConvert lexical forms, base64-encoded as UTF-8 so that any
// whitespace or tab survives; "-" marks DBNull.
using System;
using System.Data;
using System.Globalization;
using System.IO;
using System.Text;
using System.Xml;

public static class DataTableInterop
{
    public static int Main(string[] args)
    {
        try
        {
            if (args.Length == 6 && args[0] == "load")
                return Load(args[1], args[2], args[3], args[4], args[5]);
            if (args.Length == 3 && args[0] == "build")
                return Build(args[1], args[2]);
            if (args.Length == 3 && args[0] == "build-local")
                return BuildLocal(args[1], args[2]);
            var status = DataSetInterop.Run(args);
            if (status.HasValue)
                return status.Value;
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(e.ToString());
            return 2;
        }
        Console.Error.WriteLine("usage: load SCHEMA DATA DUMP OUT_SCHEMA OUT_DATA | build OUT_SCHEMA OUT_DATA"
                                + " | build-local OUT_SCHEMA OUT_DATA (DataSetInterop.cs: typed, shop,"
                                + " diffgram, compare)");
        return 64;
    }

    static int Load(string schema, string data, string dump, string outSchema, string outData)
    {
        var table = new DataTable();
        table.ReadXmlSchema(schema);
        table.ReadXml(data);
        using (var w = new StreamWriter(dump, false, new UTF8Encoding(false)))
        {
            w.WriteLine("table\t" + table.TableName);
            foreach (DataColumn c in table.Columns)
                w.WriteLine("column\t" + c.ColumnName + "\t" + c.DataType.FullName + "\t"
                            + (c.AllowDBNull ? "null" : "notnull") + "\t" + c.DateTimeMode);
            var keys = new string[table.PrimaryKey.Length];
            for (int i = 0; i < keys.Length; i++)
                keys[i] = table.PrimaryKey[i].ColumnName;
            w.WriteLine("key\t" + string.Join(",", keys));
            foreach (DataRow row in table.Rows)
            {
                var cells = new string[table.Columns.Count];
                for (int i = 0; i < cells.Length; i++)
                    cells[i] = Cell(row[i]);
                w.WriteLine("row\t" + string.Join("\t", cells));
            }
        }
        table.WriteXmlSchema(outSchema);
        table.WriteXml(outData);
        return 0;
    }

    static string Cell(object value)
    {
        if (value is DBNull)
            return "-";
        return "+" + Convert.ToBase64String(Encoding.UTF8.GetBytes(Lexical(value)));
    }

    static string Lexical(object value)
    {
        if (value is byte[]) return Convert.ToBase64String((byte[])value);
        if (value is DateTime)
            return XmlConvert.ToString((DateTime)value, XmlDateTimeSerializationMode.RoundtripKind);
        if (value is TimeSpan) return XmlConvert.ToString((TimeSpan)value);
        if (value is double) return XmlConvert.ToString((double)value);
        if (value is decimal) return XmlConvert.ToString((decimal)value);
        if (value is bool) return XmlConvert.ToString((bool)value);
        if (value is long) return XmlConvert.ToString((long)value);
        if (value is int) return XmlConvert.ToString((int)value);
        if (value is Guid) return ((Guid)value).ToString("D");
        if (value is string) return (string)value;
        return Convert.ToString(value, CultureInfo.InvariantCulture);
    }

    static int Build(string outSchema, string outData)
    {
        var t = new DataTable("person");
        t.Columns.Add("id", typeof(long)).AllowDBNull = false;
        t.Columns.Add("name", typeof(string));
        t.Columns.Add("score", typeof(double)).AllowDBNull = false;
        t.Columns.Add("price", typeof(decimal));
        t.Columns.Add("born", typeof(DateTime)).DateTimeMode = DataSetDateTime.Unspecified;
        t.Columns.Add("seen", typeof(DateTime)).DateTimeMode = DataSetDateTime.Utc;
        t.Columns.Add("active", typeof(bool));
        t.Columns.Add("uid", typeof(Guid));
        t.Columns.Add("photo", typeof(byte[]));
        t.Columns.Add("waited", typeof(TimeSpan));
        t.Columns.Add("small", typeof(int));
        t.PrimaryKey = new[] { t.Columns["id"] };
        t.Rows.Add(1L, "Ada", 1.5, 12.3456789012345678901234567m,
                   new DateTime(1815, 12, 10, 8, 30, 0, DateTimeKind.Unspecified),
                   new DateTime(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc).AddTicks(1234560),
                   true, new Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
                   new byte[] { 0, 1, 2, 255 }, new TimeSpan(1, 2, 3, 4, 500), int.MinValue);
        t.Rows.Add(long.MaxValue, "   ", double.NegativeInfinity, DBNull.Value, DBNull.Value,
                   DBNull.Value, false, DBNull.Value, DBNull.Value, TimeSpan.Zero, 0);
        t.Rows.Add(long.MinValue, DBNull.Value, double.NaN, -0.5m,
                   new DateTime(2000, 1, 1), DBNull.Value, DBNull.Value, DBNull.Value,
                   new byte[0], new TimeSpan(-3, 0, 0), DBNull.Value);
        t.Rows.Add(4L, "", 0.1, 0m, DBNull.Value, DBNull.Value, DBNull.Value, DBNull.Value,
                   DBNull.Value, DBNull.Value, DBNull.Value);
        t.WriteXmlSchema(outSchema);
        t.WriteXml(outData);
        return 0;
    }

    static int BuildLocal(string outSchema, string outData)
    {
        var t = new DataTable("event");
        t.Columns.Add("id", typeof(int)).AllowDBNull = false;
        t.Columns.Add("at", typeof(DateTime));
        t.Columns.Add("local", typeof(DateTime)).DateTimeMode = DataSetDateTime.Local;
        t.PrimaryKey = new[] { t.Columns["id"] };
        t.Rows.Add(1, new DateTime(2024, 1, 15, 8, 30, 0, DateTimeKind.Unspecified),
                   new DateTime(2024, 7, 1, 23, 0, 0, DateTimeKind.Local));
        t.Rows.Add(2, DBNull.Value, DBNull.Value);
        t.WriteXmlSchema(outSchema);
        t.WriteXml(outData);
        return 0;
    }
}
