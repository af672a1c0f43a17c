"""Public PDFs that carry their own outline (bookmarks), as truth for heading detection.

Each file in `SOURCES` is read out of a fetched snapshot of a public GitHub repository (a
bare git directory under `/work/.mirror/<owner>+<name>/`, never committed here) at the
recorded commit, and checked against its recorded sha256. The document's outline is the
truth: every entry's title, its depth, the page it points to and, when the destination
gives one, the height on that page (pdfplumber's top-down `top`). See heading_public.md.

Never used here: pdfplumber's own test PDFs, ICDAR 2013 `us-0NN` files, NICS PDFs.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdftypes import PDFObjRef, resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import decode_text

MIRRORS = Path("/work/.mirror")
CACHE = Path("/tmp/trecho-heading-public")

# One entry per file: where it came from (repository, path, commit of the fetched snapshot
# holding it), its sha256, the licence found, its page count, its outline entries and how
# many of them resolve to a page here, the main language of its text, whether it is a
# synthetic test file rather than a real-world document, and a short note.
SOURCES: list[dict[str, Any]] = [
    {
        "name": "pdflatex-outline",
        "repo": "py-pdf/sample-files",
        "path": "006-pdflatex-outline/pdflatex-outline.pdf",
        "commit": "6921079eb3e1ed0944db5ec75016910d59da7fdb",
        "sha256": "17b5a4dac75613b82749c7538fc93991a385a5d419cc9832fdba24c1726a031a",
        "licence": "CC-BY-SA-4.0 (repository README: every PDF)",
        "pages": 4,
        "outline_entries": 9,
        "resolved": 9,
        "language": "en",
        "synthetic": True,
        "note": "pdflatex test document, 9 flat sections (filler text)",
    },
    {
        "name": "pdfminer-pagelabels",
        "repo": "pdfminer/pdfminer.six",
        "path": "samples/contrib/pagelabels.pdf",
        "commit": "9e1243c4ad000bf9bbe60e81fc8dde2fccc0ed3b",
        "sha256": "a2849cc2182710cfbf36220477a67a24392f6182679ac471d4168bd4dd955bf3",
        "licence": "MIT (repository)",
        "pages": 5,
        "outline_entries": 4,
        "resolved": 4,
        "language": "en",
        "synthetic": True,
        "note": "LaTeX test document with roman/arabic page labels",
    },
    {
        "name": "pikepdf-outlines",
        "repo": "pikepdf/pikepdf",
        "path": "tests/resources/outlines.pdf",
        "commit": "96ab3e100cd941c46993aca4c3e852833b7f2bc5",
        "sha256": "3df90d00941fbafc7c53690ee6174bc08550d9cf96d476913c04e28abe1ed192",
        "licence": "MPL-2.0 (REUSE.toml: 2020 Matthias Erll)",
        "pages": 2,
        "outline_entries": 9,
        "resolved": 9,
        "language": "en",
        "synthetic": True,
        "note": "small three-level outline test document",
    },
    {
        "name": "pymupdf-docs-1.8",
        "repo": "pymupdf/PyMuPDF",
        "path": "tests/resources/2.pdf",
        "commit": "53c9aaf539b4fbb6a53010d90de3a2df96e82b5e",
        "sha256": "4af517af0abd01ef0f85ae9c873aa4d0074af76464ed8dea635295e84eae958f",
        "licence": "AGPL-3.0 (repository)",
        "pages": 46,
        "outline_entries": 60,
        "resolved": 60,
        "language": "en",
        "synthetic": False,
        "note": "PyMuPDF 1.8 manual (Sphinx, explicit /Dest arrays)",
    },
    {
        "name": "cython-reference",
        "repo": "pymupdf/PyMuPDF",
        "path": "tests/resources/cython.pdf",
        "commit": "53c9aaf539b4fbb6a53010d90de3a2df96e82b5e",
        "sha256": "489c4f18d1cd9302af98ce76ad806c424b878ac4991f02eebd749c571f07c653",
        "licence": "AGPL-3.0 (repository); document: Cython Reference Guide (Cython project)",
        "pages": 11,
        "outline_entries": 11,
        "resolved": 11,
        "language": "en",
        "synthetic": False,
        "note": "Cython Reference Guide (Sphinx)",
    },
    {
        "name": "nist-sp-800-223",
        "repo": "pymupdf/PyMuPDF",
        "path": "tests/resources/test_3842.pdf",
        "commit": "53c9aaf539b4fbb6a53010d90de3a2df96e82b5e",
        "sha256": "ccc9f0d80145c1e380fdf3f3394257545e0876b1b72379c826af091d2facf43a",
        "licence": "AGPL-3.0 (repository); NIST SP 800-223: US government work, no US copyright",
        "pages": 34,
        "outline_entries": 39,
        "resolved": 39,
        "language": "en",
        "synthetic": False,
        "note": "NIST SP 800-223, HPC security architecture",
    },
    {
        "name": "qwen2-report",
        "repo": "pymupdf/PyMuPDF",
        "path": "tests/resources/test_4751.pdf",
        "commit": "53c9aaf539b4fbb6a53010d90de3a2df96e82b5e",
        "sha256": "32d7276673eec39636207cfedd54f8275220b219e6b2ea74d6e33169a19df64d",
        "licence": "AGPL-3.0 (repository); document: arXiv 2407.10671, no licence stated",
        "pages": 26,
        "outline_entries": 27,
        "resolved": 27,
        "language": "en",
        "synthetic": False,
        "note": "Qwen2 technical report",
    },
    {
        "name": "seranon-photovoltaique",
        "repo": "pymupdf/PyMuPDF",
        "path": "tests/resources/test_2634.pdf",
        "commit": "53c9aaf539b4fbb6a53010d90de3a2df96e82b5e",
        "sha256": "919ddae10995c0b7e9c6e198593d25f9875d43580ca1c5558b24a5741291132f",
        "licence": "AGPL-3.0 (repository); document: public-inquiry study, no licence stated",
        "pages": 10,
        "outline_entries": 10,
        "resolved": 10,
        "language": "fr",
        "synthetic": False,
        "note": "French municipal study for a solar farm (Word export)",
    },
    {
        "name": "pdfjs-two-column",
        "repo": "mozilla/pdf.js",
        "path": "test/pdfs/bug1997343.pdf",
        "commit": "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "sha256": "759755768fbebf2b4ea36dcaa45520fbf66249d6a5844a5ebeecb62d5dfbb37c",
        "licence": "Apache-2.0 (repository)",
        "pages": 2,
        "outline_entries": 8,
        "resolved": 8,
        "language": "en",
        "synthetic": False,
        "note": "LaTeX two-column example article",
    },
    {
        "name": "pdfjs-automated-testing",
        "repo": "mozilla/pdf.js",
        "path": "test/pdfs/file_pdfjs_test.pdf",
        "commit": "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "sha256": "851fb6bfa4143203a284833c38138df1914a7ccca5e911dfaef8eb4e17e66b49",
        "licence": "Apache-2.0 (repository)",
        "pages": 5,
        "outline_entries": 17,
        "resolved": 17,
        "language": "en",
        "synthetic": False,
        "note": "Mozilla automated-testing notes, /FitH destinations",
    },
    {
        "name": "webapps-with-go",
        "repo": "pdfcpu/pdfcpu",
        "path": "pkg/testdata/BuildingWebappsWithGo.pdf",
        "commit": "105c0c28727afe7f85eb3179d03e9810d8774981",
        "sha256": "d1f51098ecdc00e005d15e2207cec785027dde60bc4de957105656712a751718",
        "licence": "Apache-2.0 (repository); document (J. Saenz): no licence stated",
        "pages": 24,
        "outline_entries": 15,
        "resolved": 15,
        "language": "en",
        "synthetic": False,
        "note": "GitBook export, one chapter per page",
    },
    {
        "name": "go-language-overview",
        "repo": "pdfcpu/pdfcpu",
        "path": "pkg/testdata/golang.pdf",
        "commit": "105c0c28727afe7f85eb3179d03e9810d8774981",
        "sha256": "37578d744bbbbd6814e44fd3d08a43afbcaf66cecb1e709dcabb155c5591d09d",
        "licence": "Apache-2.0 (repository); document: R. Coe, no licence stated",
        "pages": 14,
        "outline_entries": 31,
        "resolved": 31,
        "language": "en",
        "synthetic": False,
        "note": "Go language overview paper",
    },
    {
        "name": "pdf20-utf8",
        "repo": "pdfcpu/pdfcpu",
        "path": "pkg/testdata/pdf20/utf8test.pdf",
        "commit": "105c0c28727afe7f85eb3179d03e9810d8774981",
        "sha256": "066cac85038db27cb85b923eb2fbdffb4c76e94bf2f4d21cc952af94b40e71fe",
        "licence": "Apache-2.0 (repository); document: (c) 2021 PDF Association",
        "pages": 1,
        "outline_entries": 3,
        "resolved": 3,
        "language": "en",
        "synthetic": True,
        "note": "PDF 2.0 example: UTF-8 outline titles (one is an emoji)",
    },
    {
        "name": "embed-search-align",
        "repo": "Unstructured-IO/unstructured",
        "path": "example-docs/embed_search.pdf",
        "commit": "c630c594c038c6a0b3656ff3d72b2f0957c4b481",
        "sha256": "88e133a097a9ea97299ad4f2dbb1e21d55b3831b223039c907a42e8dc0376a6d",
        "licence": "Apache-2.0 (repository); document: arXiv preprint, no licence stated",
        "pages": 17,
        "outline_entries": 29,
        "resolved": 29,
        "language": "en",
        "synthetic": False,
        "note": "arXiv paper on DNA sequence alignment (branch jack/embed_table_reference)",
    },
    {
        "name": "elegantpaper-en",
        "repo": "ElegantLaTeX/ElegantPaper",
        "path": "elegantpaper-en.pdf",
        "commit": "1554b81e4816b5b13a31bf2e99b4fc87a4d104a5",
        "sha256": "d2df1412626b41cc1506d58cb354397dc5579e6807ab16883d345893e9f091cf",
        "licence": "LPPL-1.3c (repository)",
        "pages": 5,
        "outline_entries": 8,
        "resolved": 8,
        "language": "en",
        "synthetic": False,
        "note": "ElegantPaper template manual (English)",
    },
    {
        "name": "kvoptions",
        "repo": "ElegantLaTeX/ElegantPaper",
        "path": "kvoptions.pdf",
        "commit": "b5f5115193b7dd60ed62bda3104453a04eb69704",
        "sha256": "08070f1147c852e835e9ab3d91a3ac4166a26e9c8fef5257be1246bda7c343d4",
        "licence": "LPPL-1.3c (repository); document: kvoptions manual (H. Oberdiek), LPPL-1.3c",
        "pages": 50,
        "outline_entries": 113,
        "resolved": 113,
        "language": "en",
        "synthetic": False,
        "note": "kvoptions package documentation",
    },
    {
        "name": "elegantpaper-cn",
        "repo": "ElegantLaTeX/ElegantPaper",
        "path": "elegantpaper-cn.pdf",
        "commit": "fe1d54a1b1020df438bcd4f44430f8db3629eab6",
        "sha256": "34f5425dfdcae4a0127b21d1a9450bcf825624b44ee00d1691e692c7962a858e",
        "licence": "LPPL-1.3c (repository)",
        "pages": 5,
        "outline_entries": 10,
        "resolved": 10,
        "language": "zh",
        "synthetic": False,
        "note": "ElegantPaper template manual (Chinese)",
    },
    {
        "name": "elegantnote-cn",
        "repo": "ElegantLaTeX/ElegantNote",
        "path": "elegantnote-cn.pdf",
        "commit": "c7edf2131bfb0bfcf36004676daab23afcc92551",
        "sha256": "6049ddf0b298a550f24a73ceb69b866b096a356b7fc2ec2df89a78442d2b9e5a",
        "licence": "LPPL-1.3c (repository)",
        "pages": 10,
        "outline_entries": 9,
        "resolved": 9,
        "language": "zh",
        "synthetic": False,
        "note": "ElegantNote template manual (Chinese)",
    },
    {
        "name": "abntex2-manual",
        "repo": "abntex/abntex2",
        "path": "tds/doc/latex/abntex2/abntex2.pdf",
        "commit": "33fd190788b0221db79c633cb161fe5144e45b54",
        "sha256": "aaa6edc1fd3c4c6e3f6274a4f7a1a5b5d67ee7ad67c5147dd34f69f35d881ff5",
        "licence": "LPPL-1.3c (repository)",
        "pages": 31,
        "outline_entries": 59,
        "resolved": 59,
        "language": "pt",
        "synthetic": False,
        "note": "abnTeX2 class manual",
    },
    {
        "name": "abntex2-relatorio-tecnico",
        "repo": "abntex/abntex2",
        "path": "doc/latex/abntex2/abntex2-modelo-relatorio-tecnico.pdf",
        "commit": "aaa97a5db46d7f2d2fb52eabee4a41c8e7645124",
        "sha256": "89b572060f9a8de81a9a1ac8c977f64383967b619588eae2929809d0e9e8695c",
        "licence": "LPPL-1.3c (repository)",
        "pages": 51,
        "outline_entries": 39,
        "resolved": 39,
        "language": "pt",
        "synthetic": False,
        "note": "abnTeX2 canonical technical report",
    },
    {
        "name": "abntex2-artigo",
        "repo": "abntex/abntex2",
        "path": "tds/doc/latex/abntex2/abntex2-modelo-artigo.pdf",
        "commit": "4f887870f7e49172ee2cd91e1d40bf97fcd56275",
        "sha256": "4158e4cd3d8ff53ef48411c5fe1003c49deb48e9021de17e6120d4ea6ddd3892",
        "licence": "LPPL-1.3c (repository)",
        "pages": 7,
        "outline_entries": 12,
        "resolved": 12,
        "language": "pt",
        "synthetic": False,
        "note": "abnTeX2 canonical article (two columns)",
    },
    {
        "name": "abntex2cite-alf",
        "repo": "abntex/abntex2",
        "path": "tds/doc/latex/abntex2/abntex2cite-alf.pdf",
        "commit": "0db86c51f5cf1457612fe989f90be02343ddcb2c",
        "sha256": "7f538a9221dbc1e061a21b25ec4d768d3b8beeaf575dd52fc3904c2a2823e2bc",
        "licence": "LPPL-1.3c (repository)",
        "pages": 19,
        "outline_entries": 27,
        "resolved": 27,
        "language": "pt",
        "synthetic": False,
        "note": "abntex2cite manual; text layer has split accents (t´opicos)",
    },
    {
        "name": "abntex2-modelo-livro",
        "repo": "abntex/abntex2",
        "path": "doc/latex/abntex2/examples/abntex2-modelo-livro.pdf",
        "commit": "0cb2fe32e3ca5dbcbb08098497603777837f5098",
        "sha256": "a37437728c28ba97ad3b1f0fea8fd1e1d590d5a3efe07858c36d8d8d3cbf0e79",
        "licence": "LPPL-1.3c (repository)",
        "pages": 25,
        "outline_entries": 9,
        "resolved": 9,
        "language": "pt",
        "synthetic": False,
        "note": "abnTeX2 example book",
    },
    {
        "name": "abntex2-tese-canonica",
        "repo": "abntex/abntex2",
        "path": "modelo-canonico/source/tese.pdf",
        "commit": "83f74b15eb077eddab87b1e06168fa27795de4cf",
        "sha256": "5f8a70a2097d3cd9a34317106680d4157a55464bac62c6fc5549634758cfee57",
        "licence": "LPPL-1.3c (repository)",
        "pages": 48,
        "outline_entries": 14,
        "resolved": 14,
        "language": "pt",
        "synthetic": False,
        "note": "CPAI/UnB canonical thesis model",
    },
    {
        "name": "tfg-ceu",
        "repo": "asalber/plantilla-tfg-ceu",
        "path": "TFG.pdf",
        "commit": "317605d98049a1a9de82ff489076237f60e81149",
        "sha256": "1ebc2df05b1bab673eb05f1b6db2f5a59fcc6c1f8bf001c04d033795801a4f3a",
        "licence": "LPPL-1.3c (repository)",
        "pages": 51,
        "outline_entries": 29,
        "resolved": 29,
        "language": "es",
        "synthetic": False,
        "note": "CEU San Pablo bachelor thesis template (compiled)",
    },
    {
        "name": "tfg-uam",
        "repo": "jsidrach/tfg-plantilla",
        "path": "Trabajo de Fin de Grado.pdf",
        "commit": "2b9c2a51858f553b16040094f2c596e7221186eb",
        "sha256": "34897ec050320d46c99d7910edaec917891377a8ccde6eb02482f7f8571a1df6",
        "licence": "MIT (repository)",
        "pages": 40,
        "outline_entries": 12,
        "resolved": 12,
        "language": "es",
        "synthetic": False,
        "note": "EPS-UAM bachelor thesis template (compiled)",
    },
    {
        "name": "tfg-upm-echedey",
        "repo": "echedey-ls/TFG_EchedeyLuis",
        "path": "build/00_TFG_EchedeyLuisAlvarez.pdf",
        "commit": "080fa9717cf3242ee75d0a4e1ca88ee39fd3538c",
        "sha256": "023594ecfb24eff1175f1e2f4e0161ec3d05bb863346a5bbb810c18ce1c7311d",
        "licence": "none for the repository; README: the PDF is CC-BY-NC-SA-4.0",
        "pages": 20,
        "outline_entries": 28,
        "resolved": 28,
        "language": "es",
        "synthetic": False,
        "note": "UPM bachelor thesis (real)",
    },
    {
        "name": "gb7714-instruction",
        "repo": "hushidong/biblatex-gb7714-2015",
        "path": "instruction.pdf",
        "commit": "04772fba7178880ba14b4003934dabd2113bf80c",
        "sha256": "cc5734a0dcd682d20750e7a30f68b0cc9e01466ce5ef25b8e21a7eb555299320",
        "licence": "LPPL-1.3c (README)",
        "pages": 22,
        "outline_entries": 39,
        "resolved": 39,
        "language": "zh",
        "synthetic": False,
        "note": "biblatex-gb7714-2015 manual, 2016 edition",
    },
    {
        "name": "gb7714-manual-2017",
        "repo": "hushidong/biblatex-gb7714-2015",
        "path": "biblatex-gb7714-2015.pdf",
        "commit": "34c7d558843b4e484815e10455ebcd832ee6b8d7",
        "sha256": "b685d28896a0b7b908b56718b9c6100228e266c0b1f513ed007c3fce02eb3720",
        "licence": "LPPL-1.3c (README)",
        "pages": 53,
        "outline_entries": 50,
        "resolved": 50,
        "language": "zh",
        "synthetic": False,
        "note": "biblatex-gb7714-2015 manual, 2017 edition",
    },
    {
        "name": "cumcm-example",
        "repo": "latexstudio/CUMCMThesis",
        "path": "example.pdf",
        "commit": "90d3e854534ae7dc605dfe9296785f8c17e56e22",
        "sha256": "11f92d0090f56ecb64ddf32bf798ecb7feefc606a8c727abe434005fbd6cb5c2",
        "licence": "none stated",
        "pages": 12,
        "outline_entries": 13,
        "resolved": 13,
        "language": "zh",
        "synthetic": False,
        "note": "CUMCM mathematical-modelling contest paper template (compiled)",
    },
    {
        "name": "bithesis-manual",
        "repo": "BITNP/BIThesis",
        "path": "doc/doc.pdf",
        "commit": "7d97873229d7f25c9ac224aace3904c75df0eb78",
        "sha256": "c38c7e7d51643f582a44e1210490a00b050dae70f555fbf93202560ff80fdbae",
        "licence": "LPPL-1.3c (repository)",
        "pages": 46,
        "outline_entries": 57,
        "resolved": 57,
        "language": "zh",
        "synthetic": False,
        "note": "BIThesis template manual",
    },
    {
        "name": "bithesis-graduation",
        "repo": "BITNP/BIThesis",
        "path": "graduation-thesis/main.pdf",
        "commit": "dc21f6da9014b80f637a2fbfb50dd27299b39331",
        "sha256": "5af7ab562dfe9dfd5a028a78cb9043c0e086f8136c2ac5115393c9caf05bb02b",
        "licence": "LPPL-1.3c (repository)",
        "pages": 11,
        "outline_entries": 11,
        "resolved": 11,
        "language": "zh",
        "synthetic": False,
        "note": "BIThesis undergraduate thesis sample",
    },
    {
        "name": "geometry-fr",
        "repo": "LeSpib/TraductionLaTeX",
        "path": "traductions/geometry/geometry-fr.pdf",
        "commit": "1f05be091289d5075cbe6fe8da7e616b2b7af3af",
        "sha256": "4c7abe6f73655ce9954f38ae018007da57f24e00c4fafd3dcfdf74d88c48ddbb",
        "licence": "LPPL (README: all translations)",
        "pages": 42,
        "outline_entries": 28,
        "resolved": 28,
        "language": "fr",
        "synthetic": False,
        "note": "geometry package documentation, French translation",
    },
    {
        "name": "titlesec-fr",
        "repo": "LeSpib/TraductionLaTeX",
        "path": "traductions/titlesec/titlesec-fr.pdf",
        "commit": "1f05be091289d5075cbe6fe8da7e616b2b7af3af",
        "sha256": "5765ea251758851112f63da0f3b10849020bc71ce78790c91d9d48580f87b7c4",
        "licence": "LPPL (README: all translations)",
        "pages": 25,
        "outline_entries": 47,
        "resolved": 47,
        "language": "fr",
        "synthetic": False,
        "note": "titlesec documentation, French translation (text layer lacks spaces)",
    },
    {
        "name": "comment-fr",
        "repo": "LeSpib/TraductionLaTeX",
        "path": "traductions/comment/comment-fr.pdf",
        "commit": "1f05be091289d5075cbe6fe8da7e616b2b7af3af",
        "sha256": "ee70fa8e8fb11f0d1412e9bf141fdd9cdfa9a90852b20f400e01c0ce2411367a",
        "licence": "LPPL (README: all translations)",
        "pages": 4,
        "outline_entries": 10,
        "resolved": 10,
        "language": "fr",
        "synthetic": False,
        "note": "comment package documentation, French translation",
    },
    {
        "name": "appendix-fr",
        "repo": "LeSpib/TraductionLaTeX",
        "path": "traductions/appendix/appendix-fr.pdf",
        "commit": "1f05be091289d5075cbe6fe8da7e616b2b7af3af",
        "sha256": "99ef3ff186076014719338761982f51c39209a65d21af72d0636f607156314fc",
        "licence": "LPPL (README: all translations)",
        "pages": 16,
        "outline_entries": 4,
        "resolved": 4,
        "language": "fr",
        "synthetic": False,
        "note": "appendix package documentation, French translation",
    },
    {
        "name": "yathesis-canevas",
        "repo": "dbitouze/yathesis",
        "path": "doc/latex/yathesis/french/exemples/canevas/a-plat/these.pdf",
        "commit": "45da9b7ba90c857a3699f4bac1fd6c474a69a738",
        "sha256": "62b88a56ba363902f793b9b77885b514b59b4005ace36bdc6aee03e198ed9045",
        "licence": "LPPL-1.3 or later (README)",
        "pages": 30,
        "outline_entries": 8,
        "resolved": 8,
        "language": "fr",
        "synthetic": False,
        "note": "yathesis thesis skeleton (French, placeholder text)",
    },
    {
        "name": "fpledit-dokumentation",
        "repo": "FPLedit/FPLedit",
        "path": "Dokumentation.pdf",
        "commit": "f71fdaae7b0c197f52a949ddbfe08ced0e7fbb19",
        "sha256": "1d42bd372b9355acd24b5d2e7d492e1f616e294c08bc78cf77a4243704c9e33c",
        "licence": "GPL-3.0 (repository)",
        "pages": 52,
        "outline_entries": 61,
        "resolved": 61,
        "language": "de",
        "synthetic": False,
        "note": "FPLedit user manual",
    },
    {
        "name": "hyperref-manual",
        "repo": "LeSpib/TraductionLaTeX",
        "path": "traductions/hyperref/manual.pdf",
        "commit": "1f05be091289d5075cbe6fe8da7e616b2b7af3af",
        "sha256": "572440a8b4e96e592ecfcab97fbdb5bb4f68cd1e79183d8a0f131bac2a87590f",
        "licence": "LPPL (README: all translations)",
        "pages": 31,
        "outline_entries": 42,
        "resolved": 33,
        "language": "en",
        "synthetic": False,
        "note": "hyperref manual; 9 entries are GoToR links to other files (page None)",
    },
    {
        "name": "qpdf-bookmarks",
        "repo": "qpdf/qpdf",
        "path": "examples/qtest/bookmarks/1.pdf",
        "commit": "dfd251125cadb59fe04836f9197c3ef94f99cf55",
        "sha256": "9221a22336f6a1c1449454d7a8c699776440d576333814ab43e3e3a712f52cc5",
        "licence": "Apache-2.0 (repository)",
        "pages": 30,
        "outline_entries": 11,
        "resolved": 11,
        "language": "en",
        "synthetic": True,
        "note": "qpdf test file: each title states its target (/XYZ, /Fit, /FitH, /FitV, /FitR)",
    },
    {
        "name": "pdfjs-named-dests",
        "repo": "mozilla/pdf.js",
        "path": "test/pdfs/issue19474.pdf",
        "commit": "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "sha256": "45e569fb50ea4eac01cb1c71d217ece8ee37afbb59dfbe084951523df20f09b2",
        "licence": "Apache-2.0 (repository)",
        "pages": 4,
        "outline_entries": 3,
        "resolved": 3,
        "language": "en",
        "synthetic": True,
        "note": "pdf.js test file: dests by name (/Dests) and by string (name tree); no text",
    },
]


def _mirror(repo: str) -> Path | None:
    """The git directory of a fetched snapshot of `repo` ("owner/name"), if present."""
    base = MIRRORS / repo.replace("/", "+")
    for gd in (base / "repo", base / "repo" / ".git", base / ".git", base):
        if (gd / "HEAD").is_file() and (gd / "objects").is_dir():
            return gd
    return None


def _sha256(data: bytes) -> str:
    """Hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def _target(src: dict[str, Any], cache: Path) -> Path:
    """Where a source is materialized: `<cache>/<name>.pdf`."""
    return cache / f"{src['name']}.pdf"


def materialize(cache: Path = CACHE) -> list[Path]:
    """Copy every source out of its mirror into `cache` (sha256-checked); skip the missing."""
    cache.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    for src in SOURCES:
        dst = _target(src, cache)
        if dst.is_file() and _sha256(dst.read_bytes()) == src["sha256"]:
            out.append(dst)
            continue
        gd = _mirror(src["repo"])
        if gd is None:
            print(f"skip {src['name']}: fetch github:{src['repo']} first", file=sys.stderr)
            continue
        run = subprocess.run(
            ["git", "--git-dir", str(gd), "show", f"{src['commit']}:{src['path']}"],
            capture_output=True,
            check=False,
        )
        if run.returncode != 0:
            why = run.stderr.decode(errors="replace").strip()
            print(f"skip {src['name']}: {why} (fetch github:{src['repo']})", file=sys.stderr)
            continue
        if _sha256(run.stdout) != src["sha256"]:
            print(f"skip {src['name']}: sha256 differs from the record", file=sys.stderr)
            continue
        tmp = dst.with_suffix(".part")
        tmp.write_bytes(run.stdout)
        tmp.replace(dst)
        out.append(dst)
    return out


# --- outline -------------------------------------------------------------------------


def _title(raw: Any) -> str:
    """A PDF text string as str: UTF-16 (BOM), UTF-8 (BOM, PDF 2.0) or PDFDocEncoding."""
    raw = resolve1(raw)
    if isinstance(raw, PSLiteral):
        raw = raw.name
    if isinstance(raw, str):
        text = raw
    elif isinstance(raw, bytes):
        if raw.startswith(b"\xfe\xff"):
            text = raw[2:].decode("utf-16-be", errors="replace")
        elif raw.startswith(b"\xff\xfe"):
            text = raw[2:].decode("utf-16-le", errors="replace")
        elif raw.startswith(b"\xef\xbb\xbf"):
            text = raw[3:].decode("utf-8", errors="replace")
        else:
            text = decode_text(raw)
    else:
        text = ""
    text = "".join(" " if ch in "\r\n\t\x0b\x0c" else ch for ch in text)
    return " ".join(text.replace("\x00", "").split())


def _name(value: Any) -> str | bytes | None:
    """A destination name (a PDF name or string), or None when `value` is none."""
    if isinstance(value, PSLiteral):
        return value.name
    if isinstance(value, (str, bytes)):
        return value
    return None


def _key(name: str | bytes) -> bytes:
    """A destination name as the bytes a name tree or /Dests dict is keyed by."""
    if isinstance(name, bytes):
        return name
    try:
        return name.encode("latin-1")
    except UnicodeEncodeError:
        return name.encode("utf-8")


class _Dests:
    """The document's named destinations: /Names /Dests (a name tree keyed by strings)
    and the PDF 1.1 /Dests dictionary (keyed by names), both read once."""

    def __init__(self, doc: PDFDocument) -> None:
        self.tree: dict[bytes, Any] = {}
        self.old: dict[bytes, Any] = {}
        catalog = doc.catalog
        old = resolve1(catalog.get("Dests"))
        if isinstance(old, dict):
            self.old = {_key(k): v for k, v in old.items() if isinstance(k, (str, bytes))}
        names = resolve1(catalog.get("Names"))
        root = resolve1(names.get("Dests")) if isinstance(names, dict) else None
        seen: set[int] = set()
        todo: list[Any] = [root] if isinstance(root, dict) else []
        while todo:  # every leaf of the tree; /Limits are not trusted
            node = todo.pop()
            pairs = resolve1(node.get("Names"))
            if isinstance(pairs, list):
                for k, v in zip(pairs[0::2], pairs[1::2], strict=False):
                    k = resolve1(k)
                    if isinstance(k, (str, bytes)):
                        self.tree.setdefault(_key(k), v)
            for kid in resolve1(node.get("Kids")) or []:
                key = kid.objid if isinstance(kid, PDFObjRef) else id(kid)
                kid = resolve1(kid)
                if key not in seen and isinstance(kid, dict):
                    seen.add(key)
                    todo.append(kid)

    def get(self, name: str | bytes) -> Any:
        """A name object looks in /Dests first, a string in the name tree first."""
        keys = [_key(name)]
        if isinstance(name, str) and name.encode("utf-8") != keys[0]:
            keys.append(name.encode("utf-8"))  # a name pdfminer decoded as UTF-8
        tables = (self.old, self.tree) if isinstance(name, str) else (self.tree, self.old)
        for table in tables:
            for key in keys:
                if key in table:
                    return table[key]
        return None


def _explicit(dests: _Dests, dest: Any, depth: int = 0) -> list[Any] | None:
    """The explicit destination array behind a dest: array, name, string or {/D ...}."""
    dest = resolve1(dest)
    if depth > 8 or dest is None:
        return None
    if isinstance(dest, dict):
        return _explicit(dests, dest.get("D"), depth + 1)
    name = _name(dest)
    if name is not None:
        return _explicit(dests, dests.get(name), depth + 1)
    if isinstance(dest, list) and dest:
        return dest
    return None


def _action_dest(action: Any) -> Any:
    """The destination of a GoTo action (None for URI, GoToR, JavaScript, ...)."""
    action = resolve1(action)
    if not isinstance(action, dict):
        return None
    kind = resolve1(action.get("S"))
    if _name(kind) != "GoTo":
        return None
    return action.get("D")


def _number(value: Any) -> float | None:
    """A PDF number as float; None for null or anything else."""
    value = resolve1(value)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _place(
    pdf: pdfplumber.PDF, pages: dict[int, int], array: list[Any] | None
) -> tuple[int | None, float | None]:
    """(1-based page, top from the page's top edge) of an explicit destination array."""
    if not array:
        return None, None
    ref = array[0]
    index: int | None = None
    if isinstance(ref, PDFObjRef):
        index = pages.get(ref.objid)
    elif isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < len(pdf.pages):
        index = ref  # a page index: the form of remote dests, tolerated in local ones
    elif isinstance(ref, dict):
        index = next((i for i, p in enumerate(pdf.pages) if p.page_obj.attrs is ref), None)
    if index is None:
        return None, None
    kind = _name(resolve1(array[1])) if len(array) > 1 else None
    y: float | None = None
    if kind == "XYZ" and len(array) > 3:
        y = _number(array[3])
    elif kind in ("FitH", "FitBH") and len(array) > 2:
        y = _number(array[2])
    elif kind == "FitR" and len(array) > 5:
        y = _number(array[5])
    page = pdf.pages[index]
    if y is None or page.rotation != 0:
        return index + 1, None
    return index + 1, round(float(page.height) - y, 2)


def outline(pdf: Path) -> list[dict[str, Any]]:
    """The document outline in reading order: {"title", "level", "page", "top"} per entry.

    `level` is 1 for top-level entries; `page` is 1-based (None when the entry has no
    destination or it cannot be resolved); `top` is the destination's height in
    pdfplumber's top-down coordinates (page height minus the PDF y) for /XYZ, /FitH,
    /FitBH and /FitR destinations on unrotated pages, else None. Entries without a
    /Title are skipped but their children are kept; GoToR, URI, Launch and other
    non-GoTo actions give page None.
    """
    out: list[dict[str, Any]] = []
    with pdfplumber.open(pdf) as doc:
        pages = {p.page_obj.pageid: i for i, p in enumerate(doc.pages)}
        dests = _Dests(doc.doc)
        root = resolve1(doc.doc.catalog.get("Outlines"))
        if not isinstance(root, dict):
            return out
        seen: set[int] = set()
        # depth-first, iterative: (item reference, level); `First` children precede `Next`.
        stack: list[tuple[Any, int]] = [(root.get("First"), 1)]
        while stack:
            ref, level = stack.pop()
            while ref is not None:
                key = ref.objid if isinstance(ref, PDFObjRef) else id(ref)
                item = resolve1(ref)
                if key in seen or not isinstance(item, dict) or len(out) > 100_000:
                    break
                seen.add(key)
                nxt = item.get("Next")
                if "Title" in item:
                    dest = item.get("Dest")
                    if dest is None:
                        dest = _action_dest(item.get("A"))
                    page, top = _place(doc, pages, _explicit(dests, dest))
                    title = _title(item["Title"])
                    out.append({"title": title, "level": level, "page": page, "top": top})
                if item.get("First") is not None:
                    stack.append((nxt, level))
                    ref, level = item.get("First"), level + 1
                    continue
                ref = nxt
    return out


def cases(cache: Path = CACHE) -> list[tuple[str, Path, list[dict[str, Any]]]]:
    """(name, pdf path, outline entries) for every file materialized into `cache`."""
    by_name = {src["name"]: src for src in SOURCES}
    out: list[tuple[str, Path, list[dict[str, Any]]]] = []
    for path in materialize(cache):
        name = path.stem
        if name in by_name:
            out.append((name, path, outline(path)))
    return out


def main() -> None:
    """Materialize every source and print a table of what its outline gives."""
    by_name = {src["name"]: src for src in SOURCES}
    rows = cases()
    print(f"{'name':<28} {'pages':>5} {'entries':>7} {'resolved':>8}  language")
    for name, _path, entries in rows:
        src = by_name[name]
        resolved = sum(1 for e in entries if e["page"] is not None)
        same = (len(entries), resolved) == (src["outline_entries"], src["resolved"])
        flag = "" if same else "  (differs from the record)"
        lang = src["language"] + (" (synthetic)" if src["synthetic"] else "")
        print(f"{name:<28} {src['pages']:>5} {len(entries):>7} {resolved:>8}  {lang}{flag}")
    total = sum(len(e) for _, _, e in rows)
    print(f"{len(rows)} of {len(SOURCES)} files, {total} outline entries")


if __name__ == "__main__":
    main()
