"""Headings and stubs of the generated tables (bench/table_corpus.py), as public
statistical tables print them: housing characteristics, the states, industries."""

from __future__ import annotations

HOUSING = (
    ("Total occupied housing units", True, ["Inadequate", "Moderately inadequate", "Crowded"]),
    (
        "Units in structure",
        False,
        ["1, detached", "1, attached", "2 to 4", "5 to 19", "20 or more", "Mobile home"],
    ),
    (
        "Year structure built",
        False,
        ["2020 or later", "2010 to 2019", "2000 to 2009", "1980 to 1999", "Before 1980"],
    ),
    ("Heating fuel", False, ["Utility gas", "Electricity", "Fuel oil, kerosene", "Other fuel"]),
)


STATES = (
    "Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware "
    "District_of_Columbia Florida Georgia Hawaii Idaho Illinois Indiana Iowa Kansas Kentucky "
    "Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi Missouri Montana "
    "Nebraska Nevada New_Hampshire New_Jersey New_Mexico New_York North_Carolina North_Dakota "
    "Ohio Oklahoma Oregon Pennsylvania Rhode_Island South_Carolina South_Dakota Tennessee Texas "
    "Utah Vermont Virginia Washington West_Virginia Wisconsin Wyoming"
).split()


INDUSTRIES = (
    ("Agriculture and related industries", ["Crop production", "Animal production", "Forestry"]),
    ("Mining, quarrying, and oil and gas extraction", ["Oil and gas extraction", "Coal mining"]),
    ("Construction", ["Construction of buildings", "Specialty trade contractors"]),
    (
        "Manufacturing",
        [
            "Food manufacturing",
            "Beverage and tobacco products",
            "Textile mills",
            "Apparel manufacturing",
            "Paper and printing",
            "Chemical manufacturing",
            "Plastics and rubber products",
            "Primary metals",
            "Machinery manufacturing",
            "Computer and electronic products",
            "Transportation equipment",
            "Furniture and related products",
        ],
    ),
    ("Wholesale trade", ["Durable goods", "Nondurable goods"]),
    (
        "Retail trade",
        [
            "Motor vehicle and parts dealers",
            "Furniture and home furnishings stores",
            "Electronics and appliance stores",
            "Building material and garden supply",
            "Food and beverage stores",
            "Health and personal care stores",
            "Gasoline stations",
            "Clothing and accessories stores",
            "General merchandise stores",
        ],
    ),
    (
        "Transportation and warehousing",
        [
            "Air transportation",
            "Rail transportation",
            "Truck transportation",
            "Warehousing and storage",
        ],
    ),
    (
        "Information",
        ["Publishing, except internet", "Telecommunications", "Data processing and hosting"],
    ),
    (
        "Financial activities",
        [
            "Banking and credit",
            "Securities and investments",
            "Insurance",
            "Real estate",
            "Rental and leasing",
        ],
    ),
    (
        "Professional and business services",
        [
            "Legal services",
            "Accounting and bookkeeping",
            "Architectural and engineering",
            "Computer systems design",
            "Management and consulting",
            "Administrative and support",
            "Waste management",
        ],
    ),
    (
        "Education and health services",
        [
            "Elementary and secondary schools",
            "Colleges and universities",
            "Hospitals",
            "Nursing care facilities",
            "Social assistance",
        ],
    ),
    (
        "Leisure and hospitality",
        ["Arts and entertainment", "Accommodation", "Restaurants and food services"],
    ),
    ("Public administration", ["Federal government", "State government", "Local government"]),
)
