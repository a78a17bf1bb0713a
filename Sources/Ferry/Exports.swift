@_exported import FerrySQLite
