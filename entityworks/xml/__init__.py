"""XML and XSD in .NET's DataTable / DataSet shape."""
