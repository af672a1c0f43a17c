"""Words and figures of the synthetic tables: headings, stub labels, units and values as
statistical offices print them. Only vocabularies and formatting live here; which of them a
table uses is drawn in `spec.py`."""

from __future__ import annotations

import random

# Dimensions a heading level or a stub group can run over (each a list of labels).
DIMENSIONS: dict[str, list[str]] = {
    "sex": ["Both sexes", "Male", "Female"],
    "sex2": ["Men", "Women"],
    "area": ["Urban", "Rural"],
    "tenure": ["Owner", "Renter"],
    "years": [str(y) for y in range(2011, 2025)],
    "fiscal": [f"{y}–{str(y + 1)[2:]}" for y in range(2014, 2024)],
    "quarters": ["Q1", "Q2", "Q3", "Q4"],
    "months": "Jan. Feb. Mar. Apr. May June July Aug. Sept. Oct. Nov. Dec.".split(),
    "measure": ["Number", "Percent"],
    "measure3": ["Number", "Percent", "Rate per 1,000"],
    "estimate": ["Estimate", "Margin of error"],
    "change": ["Amount", "Percent change"],
    "price": ["Current prices", "Constant prices"],
    "flow": ["Imports", "Exports", "Balance"],
    "age": ["Under 18 years", "18 to 64 years", "65 years and over"],
    "education": ["Less than high school", "High school", "Some college", "Bachelor's or more"],
    "race": ["White", "Black", "Asian", "Hispanic or Latino", "Other races"],
    "income": ["Under $25,000", "$25,000 to $49,999", "$50,000 to $99,999", "$100,000 or more"],
    "size": ["1 to 4 employees", "5 to 19", "20 to 99", "100 to 499", "500 or more"],
    "status": ["Full-time", "Part-time"],
    "stat": ["Mean", "Median", "Std. dev."],
    "region": ["Northeast", "Midwest", "South", "West"],
    "sector": ["Public", "Private"],
    "ownership": ["Federal", "State", "Local"],
}

# Spanning headings a group of columns can carry on top of a dimension.
GROUP_WORDS = [
    "Population",
    "Employed persons",
    "Households",
    "Median household income",
    "Enrollment",
    "Gross output",
    "Value added",
    "Deaths",
    "Births",
    "Net migration",
    "Housing units",
    "Wages and salaries",
    "Establishments",
    "Hours worked",
    "Production",
    "Consumption",
    "Expenditure",
    "Receipts",
    "Labor force",
    "Unemployment",
    "Persons in poverty",
    "Average weekly earnings",
    "Harvested area",
    "Yield",
]

# Stub vocabularies: group labels and the rows printed under them.
STUB_GROUPS: dict[str, list[str]] = {
    "industry": [
        "Agriculture, forestry, fishing and hunting",
        "Mining, quarrying, and oil and gas extraction",
        "Construction",
        "Manufacturing",
        "Wholesale trade",
        "Retail trade",
        "Transportation and warehousing",
        "Information",
        "Finance and insurance",
        "Real estate and rental and leasing",
        "Professional, scientific, and technical services",
        "Educational services",
        "Health care and social assistance",
        "Accommodation and food services",
        "Public administration",
    ],
    "manufacturing": [
        "Food products",
        "Beverages and tobacco",
        "Textile mills",
        "Apparel",
        "Paper products",
        "Chemicals",
        "Plastics and rubber",
        "Primary metals",
        "Fabricated metal products",
        "Machinery",
        "Computer and electronic products",
        "Motor vehicles and parts",
        "Furniture",
    ],
    "region": ["Northeast", "Midwest", "South", "West"],
    "division": [
        "New England",
        "Middle Atlantic",
        "East North Central",
        "West North Central",
        "South Atlantic",
        "East South Central",
        "West South Central",
        "Mountain",
        "Pacific",
    ],
    "state": (
        "Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida "
        "Georgia Hawaii Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland "
        "Massachusetts Michigan Minnesota Mississippi Missouri Montana Nebraska Nevada Ohio "
        "Oklahoma Oregon Pennsylvania Tennessee Texas Utah Vermont Virginia Washington "
        "Wisconsin Wyoming"
    ).split(),
    "country": [
        "Argentina",
        "Australia",
        "Austria",
        "Belgium",
        "Brazil",
        "Canada",
        "Chile",
        "Denmark",
        "Finland",
        "France",
        "Germany",
        "Greece",
        "Ireland",
        "Italy",
        "Japan",
        "Mexico",
        "Netherlands",
        "Norway",
        "Portugal",
        "Spain",
        "Sweden",
        "Switzerland",
        "United Kingdom",
    ],
    "age": [
        "Under 5 years",
        "5 to 14 years",
        "15 to 24 years",
        "25 to 34 years",
        "35 to 44 years",
        "45 to 54 years",
        "55 to 64 years",
        "65 to 74 years",
        "75 years and over",
    ],
    "cause": [
        "Diseases of heart",
        "Malignant neoplasms",
        "Accidents (unintentional injuries)",
        "Cerebrovascular diseases",
        "Chronic lower respiratory diseases",
        "Alzheimer disease",
        "Diabetes mellitus",
        "Influenza and pneumonia",
        "Kidney disease",
    ],
    "crop": [
        "Corn for grain",
        "Soybeans",
        "Wheat, all",
        "Winter wheat",
        "Cotton, upland",
        "Sorghum for grain",
        "Barley",
        "Oats",
        "Rice",
        "Hay, all",
        "Peanuts",
        "Sugar beets",
    ],
    "product": [
        "Crude oil",
        "Natural gas",
        "Coal",
        "Electricity",
        "Motor gasoline",
        "Distillate fuel oil",
        "Jet fuel",
        "Propane",
        "Renewable energy",
        "Nuclear electric power",
    ],
    "occupation": [
        "Management occupations",
        "Business and financial operations",
        "Computer and mathematical",
        "Architecture and engineering",
        "Legal occupations",
        "Education, training, and library",
        "Healthcare practitioners and technical",
        "Protective service",
        "Sales and related",
        "Office and administrative support",
        "Production occupations",
    ],
    "housing": [
        "1, detached",
        "1, attached",
        "2 to 4 units",
        "5 to 19 units",
        "20 or more units",
        "Mobile home",
        "Boat, RV, van, etc.",
    ],
    "school": ["Kindergarten", *[f"Grade {g}" for g in range(1, 13)], "Ungraded"],
}

# Group rows whose indented rows are another stub vocabulary.
STUB_PARENTS: dict[str, list[str]] = {
    "industry": ["Private industries", "Goods-producing", "Service-providing", "Government"],
    "region": ["Northeast", "Midwest", "South", "West"],
    "age": ["Both sexes", "Male", "Female"],
    "cause": ["All persons", "Men", "Women"],
    "crop": ["Field crops", "Feed grains", "Food grains", "Oilseeds"],
    "product": ["Production", "Imports", "Consumption"],
    "occupation": ["Full-time workers", "Part-time workers"],
    "housing": ["Units in structure", "Occupied units", "Vacant units"],
    "state": ["Northeast", "Midwest", "South", "West"],
    "country": ["Europe", "Americas", "Asia and Pacific"],
    "school": ["Public schools", "Private schools"],
    "division": ["Metropolitan", "Nonmetropolitan"],
    "manufacturing": ["Durable goods", "Nondurable goods"],
}

STUB_HEADS = ["Characteristic", "Industry", "Item", "Area", "State", "Country", "Category", ""]
TOTALS = ["Total", "All industries", "United States", "All persons", "Total, all items", "All"]
UNITS = ["Number", "Percent", "(%)", "($)", "(1,000)", "Thousands", "Index", "(mil. $)", "Rate"]
NA_MARKS = ["–", "—", "(X)", "..", "...", "(NA)", "(D)", "x", "n.a.", "-", "(S)", "*"]
NOTE_MARKS = ["1", "2", "3", "a", "b", "c", "r", "p", "e", "*", "†"]
TOPICS = [
    "Employment and wages",
    "Resident population",
    "Selected housing characteristics",
    "Crop production",
    "Energy supply and disposition",
    "Deaths and death rates",
    "School enrollment",
    "Foreign trade",
    "Household income",
    "Labor force status",
    "Gross domestic product",
    "Business establishments",
]
SENTENCE_WORDS = (
    "the estimates are based on a sample of households and are subject to sampling "
    "variability data for the most recent year are preliminary and may be revised figures "
    "may not add to totals because of rounding see the technical notes for definitions of "
    "terms and for the methods used to compute standard errors the survey covers the "
    "civilian noninstitutional population excluding members of the armed forces estimates "
    "for small areas should be used with caution changes between years reflect revisions "
    "to the population controls and to the classification of industries"
).split()


def sentence(rng: random.Random, words: int) -> str:
    """A plausible sentence of prose around a table."""
    text = " ".join(rng.choice(SENTENCE_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    """A paragraph of a few sentences."""
    return " ".join(sentence(rng, rng.randint(8, 20)) for _ in range(sentences))


# --- figures -----------------------------------------------------------------------------


def figure(rng: random.Random, kind: str, scale: float, sep: str, minus: str) -> str:
    """One value as printed: `kind` is count, decimal, percent, money, change or index."""
    if kind == "count":
        text = f"{rng.uniform(0.05, 1.0) * scale:,.0f}"
    elif kind == "decimal":
        text = f"{rng.uniform(0.05, 1.0) * scale / 100:,.{rng.choice([1, 2])}f}"
    elif kind == "percent":
        text = f"{rng.uniform(0, 99.9):.1f}"
        text += "%" if rng.random() < 0.3 else ""
    elif kind == "money":
        text = "$" + f"{rng.uniform(0.05, 1.0) * scale:,.0f}"
    elif kind == "change":
        v = rng.uniform(-25, 25)
        body = f"{abs(v):.1f}"
        text = (minus if v < 0 else ("+" if rng.random() < 0.2 else "")) + body
        if v < 0 and minus == "(":
            text = f"({body})"
    else:  # index
        text = f"{rng.uniform(80, 140):.1f}"
    if sep != ",":
        text = text.replace(",", sep)
    return text


# Sub-column sets repeated under each group heading of a wide table (short, often wrapping
# in a narrow column).
WIDE_SUBS: list[list[str]] = [
    ["Filed", "Granted", "Denied", "Pending", "Withdrawn"],
    ["New", "Renewed", "Transferred", "Revoked", "Other"],
    ["Total", "Male", "Female"],
    ["Full-time", "Part-time", "Seasonal"],
    ["Cases", "Rate", "Percent change"],
    ["Inpatient", "Outpatient", "Emergency", "Other visits", "Referrals", "Deaths"],
    ["Public", "Private", "Charter", "Home school"],
    ["Owner occupied", "Renter occupied", "Vacant", "Seasonal use"],
    ["Cars", "Trucks", "Buses", "Motor-cycles", "Other vehicles", "Trailers"],
    ["Number", "Percent", "Margin of error"],
    ["Exports", "Imports", "Balance", "Re-exports"],
    ["Wheat", "Maize", "Rice", "Barley", "Other grains", "Pulses"],
]
