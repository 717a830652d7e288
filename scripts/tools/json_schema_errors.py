"""Validates JSON documents against a JSON Schema with python-jsonschema, the reference
implementation (formats checked), for the tests: `python3 json_schema_errors.py SCHEMA` reads a
JSON array of documents on stdin and prints a JSON array with, for each, its errors (empty when
it is valid). The schema itself is checked against its draft's meta-schema first; an invalid
schema exits 1 with the reason."""

import json
import sys

import jsonschema


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as file:
        schema = json.load(file)
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        print(f"the schema is not valid {validator_class.__name__}: {error.message}", file=sys.stderr)
        return 1
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    documents = json.load(sys.stdin)
    errors = [
        [f"{error.message} at /{'/'.join(map(str, error.absolute_path))}" for error in validator.iter_errors(document)]
        for document in documents
    ]
    json.dump(errors, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
