"""Rebuild the sample corpus under the data lake: two manuals, two laws, question files.

Usage::

    python scripts/make_sample_corpus.py [--lake data_lake] [--laws ../shared/corpora/leis]

The manuals are rendered with fpdf2 and the DejaVu TTF fonts. Everything that could vary
between runs (creation date, file id) is pinned, so re-running produces byte-identical PDFs.
The laws and the dev questions are copied byte for byte from the shared corpus; when that
folder is absent the copies already in the lake are kept.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

try:
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos
except ImportError:  # pragma: no cover - dev dependency
    sys.exit("fpdf2 is required: pip install -e '.[dev]' (or pip install fpdf2==2.8.9)")

REPO_ROOT = Path(__file__).resolve().parent.parent
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT_REGULAR = FONT_DIR / "DejaVuSans.ttf"
FONT_BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
FAMILY = "DejaVu"
# A fixed timestamp: fpdf2 derives the file /ID from it and the content, so output is stable.
CREATION_DATE = dt.datetime(2026, 1, 1, 0, 0, 0, tzinfo=dt.UTC)

# Typography (points).
TITLE_PT = 16
CHAPTER_PT = 16
HEADING_PT = 14
SUBHEADING_PT = 12
BODY_PT = 11
RUNNING_PT = 8

Block = tuple[Any, ...]
"""One layout block: ("title" | "h1" | "h2" | "p" | "caption" | "label", text) or
("table", rows, col_widths)."""


@dataclass
class ManualSpec:
    """A manual to render: where it goes, its sidecar, running header and content."""

    doc_id: str
    version: str
    sidecar: dict[str, Any]
    running_header: str
    blocks: list[Block] = field(default_factory=list)
    h1_pt: int = HEADING_PT


# --------------------------------------------------------------------------- content


def manual_operacao() -> ManualSpec:
    """Operation and maintenance manual for the BC-200 pump (one version)."""
    p = "p"
    blocks: list[Block] = [
        ("title", "Manual de Operação e Manutenção —\nBomba Centrífuga BC-200"),
        (
            p,
            "Este manual reúne as rotinas de inspeção, os limites de tolerância e as regras "
            "de registro aplicáveis à bomba centrífuga BC-200 instalada nas estações de "
            "recalque da planta. Ele se destina às equipes de operação e de manutenção e "
            "deve ser consultado antes de qualquer intervenção no equipamento.",
        ),
        ("h1", "1. Escopo"),
        (
            p,
            "Este documento se aplica a todas as bombas centrífugas do modelo BC-200 em "
            "operação contínua ou intermitente, incluindo as unidades reserva mantidas em "
            "prontidão. Ficam fora do escopo os motores elétricos de acionamento, que seguem "
            "manual próprio, e as tubulações de sucção e recalque, cuja manutenção é "
            "responsabilidade da equipe de utilidades.",
        ),
        (
            p,
            "As rotinas aqui descritas complementam as instruções do fabricante e não as "
            "substituem. Em caso de divergência entre este manual e o catálogo técnico do "
            "fabricante, prevalece o critério mais conservador, e a divergência deve ser "
            "comunicada à Engenharia de Manutenção.",
        ),
        ("h1", "2. Frequência"),
        (
            p,
            "As inspeções seguem um calendário fixo, definido a partir do histórico de falhas "
            "do equipamento e das recomendações do fabricante. O calendário é contado a "
            "partir da data da última inspeção registrada, e não da data de instalação da "
            "bomba.",
        ),
        ("h2", "2.1 Inspeção visual"),
        (
            p,
            "A inspeção visual deve ser realizada a cada 30 dias, com o equipamento em "
            "funcionamento. O inspetor verifica vazamentos no selo mecânico, corrosão na "
            "carcaça, fixação dos parafusos da base e o estado da proteção do acoplamento. "
            "Qualquer anomalia observada deve ser fotografada e descrita no registro da "
            "inspeção.",
        ),
        ("h2", "2.2 Medição de vibração"),
        (
            p,
            "A medição de vibração deve ser feita a cada 90 dias, com coletor portátil, nos "
            "mancais do lado acoplado e do lado oposto, nas direções horizontal, vertical e "
            "axial. A leitura considerada é a velocidade eficaz de vibração, expressa em "
            "milímetros por segundo, e deve ser comparada com o limite indicado na Tabela 1.",
        ),
        (
            p,
            "Quando a leitura passar de setenta por cento do limite, a medição passa a ser "
            "mensal até que a causa seja identificada e corrigida.",
        ),
        ("h2", "2.3 Inspeções fora do calendário"),
        (
            p,
            "Uma inspeção fora do calendário, seja antecipada ou adicional, depende da "
            "aprovação do técnico responsável pela área. O pedido deve informar o motivo da "
            "inspeção extra, como ruído anormal, aquecimento ou alarme do sistema "
            "supervisório, e a aprovação deve ser anexada ao registro correspondente.",
        ),
        (
            p,
            "Sem essa aprovação, a inspeção não entra no planejamento e não altera a data da "
            "próxima inspeção programada.",
        ),
        ("h1", "3. Tabela de tolerância"),
        (
            p,
            "Os valores medidos nas inspeções devem ser comparados com os limites abaixo. "
            "Cada medida tem uma unidade própria e uma ação obrigatória quando o limite é "
            "ultrapassado.",
        ),
        ("caption", "Tabela 1 – Limites de tolerância por medida"),
        (
            "table",
            [
                ["Medida", "Unidade", "Limite", "Ação"],
                ["Vibração", "mm/s", "4,5", "Parar o equipamento"],
                ["Temperatura", "C", "85", "Reduzir a carga"],
                ["Ruído", "dB", "92", "Revisar o isolamento"],
                ["Desalinhamento", "mm", "0,08", "Realinhar o eixo"],
            ],
            (45, 30, 30, 65),
        ),
        (
            p,
            "Quando um limite for ultrapassado, o operador deve executar imediatamente a ação "
            "indicada na tabela, comunicar o técnico responsável e repetir a medição após a "
            "correção. O equipamento só volta à operação normal depois que a nova medição "
            "ficar dentro do limite e for registrada no sistema.",
        ),
        ("h1", "4. Registro"),
        (
            p,
            "Toda medição deve ser registrada com a data, o nome do responsável pela medição "
            "e o valor medido, acompanhado da unidade. O registro é feito no sistema de "
            "manutenção no mesmo dia da inspeção, ainda que o valor esteja dentro do limite.",
        ),
        (
            p,
            "Registros incompletos, sem data, sem responsável ou sem valor, são rejeitados "
            "pelo sistema de auditoria, e a inspeção correspondente é considerada não "
            "realizada. Nesse caso, a medição deve ser repetida e registrada novamente.",
        ),
        (
            p,
            "Os registros são mantidos por cinco anos e servem de base para a revisão anual "
            "deste manual e dos limites de tolerância.",
        ),
    ]
    return ManualSpec(
        doc_id="manual-operacao",
        version="v1",
        sidecar={
            "title": "Manual de Operação e Manutenção — Bomba Centrífuga BC-200",
            "valid_from": dt.date(2026, 1, 1),
            "status": "active",
            "type": "manual",
            "metadata": {"owner": "Engenharia de Manutenção"},
        },
        running_header="Manual BC-200 — Operação e Manutenção",
        blocks=blocks,
    )


def manual_beneficiario(version: int) -> ManualSpec:
    """Beneficiary manual; v6 and v7 differ only in the refund deadline and version label."""
    if version not in (6, 7):
        raise ValueError(f"unknown manual-beneficiario version: {version}")
    refund = "30 dias" if version == 7 else "60 dias"
    title = "Manual do Beneficiário — Plano Saúde Integral"
    p = "p"
    table = [
        ["Procedimento", "Autorização", "Reembolso", "Recurso"],
        ["Consulta", "Dispensada", refund, "15 dias úteis"],
        ["Exames simples", "3 dias úteis", refund, "15 dias úteis"],
        ["Cirurgia eletiva", "21 dias úteis", refund, "15 dias úteis"],
        ["Internação eletiva", "10 dias úteis", refund, "15 dias úteis"],
    ]
    blocks: list[Block] = [
        ("title", title),
        ("label", f"Versão {version}"),
        (
            p,
            "Este manual explica como utilizar a cobertura do Plano Saúde Integral: quando é "
            "preciso pedir autorização, como solicitar o reembolso de despesas e o que fazer "
            "em situações de urgência e emergência. Guarde-o junto com a sua carteirinha e "
            "consulte-o sempre que tiver dúvidas.",
        ),
        ("h1", "Capítulo 1 – Autorizações"),
        (
            p,
            "Alguns procedimentos só são cobertos depois de autorizados pela operadora. A "
            "solicitação de autorização é feita pelo médico ou pelo prestador credenciado, "
            "pelo portal do beneficiário ou pela central de atendimento, e o prazo de "
            "resposta depende do tipo de procedimento.",
        ),
        ("h2", "1.1 Cirurgia eletiva"),
        (
            p,
            "O prazo para a autorização de cirurgia eletiva é de 21 dias úteis, contados a "
            "partir da data da solicitação com o pedido médico completo. Se a operadora não "
            "responder dentro desse prazo, o beneficiário pode registrar reclamação na "
            "central de atendimento.",
        ),
        (
            p,
            "Esse prazo é prorrogável uma única vez, por igual período, mediante "
            "justificativa por escrito enviada ao beneficiário antes do fim do prazo "
            "original, por exemplo quando for necessária uma junta médica.",
        ),
        (
            p,
            "Casos de urgência e emergência dispensam autorização prévia e seguem as regras "
            "do Capítulo 3.",
        ),
        ("h2", "1.2 Exames e consultas"),
        (
            p,
            "Consultas eletivas com médicos da rede credenciada não precisam de autorização. "
            "Exames simples, como análises clínicas e radiografias, são autorizados em até "
            "3 dias úteis a partir da data da solicitação; exames de alta complexidade "
            "seguem o mesmo prazo da cirurgia eletiva.",
        ),
        ("h2", "1.3 Internação eletiva"),
        (
            p,
            "A internação eletiva, quando não estiver associada a uma cirurgia, é autorizada "
            "em até 10 dias úteis a partir da data da solicitação. A guia de internação "
            "indica o número de diárias autorizadas; diárias adicionais exigem nova "
            "solicitação pelo hospital.",
        ),
        ("h1", "Capítulo 2 – Reembolso"),
        (
            p,
            "O reembolso cobre despesas com profissionais e serviços fora da rede "
            "credenciada, dentro dos limites do contrato. A solicitação de reembolso é feita "
            "pelo portal do beneficiário ou pelo aplicativo, e o prazo de pagamento é "
            "diferente do prazo de autorização.",
        ),
        ("h2", "2.1 Prazo de reembolso"),
        (
            p,
            f"O prazo para o pagamento do reembolso é de {refund} corridos, contados a "
            "partir da data da entrega da documentação completa. Se faltar algum documento, "
            "a contagem do prazo só começa quando a solicitação estiver completa.",
        ),
        (
            p,
            "O valor é depositado na conta corrente cadastrada pelo titular do plano. Se o "
            "reembolso não for pago dentro desse prazo, o valor é corrigido pelo índice "
            "previsto no contrato até a data do pagamento.",
        ),
        ("h2", "2.2 Documentos para reembolso"),
        (
            p,
            "Para solicitar o reembolso, envie a nota fiscal ou o recibo original com o nome "
            "do paciente, o CPF ou CNPJ do prestador e a descrição do serviço; o pedido "
            "médico, quando se tratar de exames ou terapias; e o relatório médico, no caso "
            "de cirurgias e internações.",
        ),
        (
            p,
            "A solicitação deve ser feita em até um ano contado da data do atendimento. "
            "Depois desse período, o direito ao reembolso expira.",
        ),
        ("h2", "2.3 Valor do reembolso"),
        (
            p,
            "O valor reembolsado segue a tabela de referência da operadora para cada "
            "procedimento, multiplicada pelo fator do seu plano, e nunca ultrapassa o valor "
            "efetivamente pago. O demonstrativo de cálculo fica disponível no portal depois "
            "do pagamento.",
        ),
        ("h1", "Capítulo 3 – Urgência e emergência"),
        (
            p,
            "Urgência é o atendimento decorrente de acidente pessoal ou de complicação na "
            "gestação. Emergência é a situação que implica risco imediato de vida ou de "
            "lesão irreparável, atestada pelo médico assistente.",
        ),
        ("h2", "3.1 Atendimento sem autorização prévia"),
        (
            p,
            "Em casos de urgência e emergência, o atendimento não depende de autorização "
            "prévia da operadora. Procure o pronto-socorro mais próximo da rede credenciada "
            "e apresente a carteirinha e um documento com foto.",
        ),
        (
            p,
            "Se não houver prestador credenciado disponível na localidade, o atendimento em "
            "serviço não credenciado é reembolsado conforme as regras do Capítulo 2.",
        ),
        ("h2", "3.2 Remoção do paciente"),
        (
            p,
            "Quando o paciente precisar ser transferido para outra unidade, a remoção em "
            "ambulância é coberta dentro da área de abrangência do plano, mediante "
            "solicitação do médico assistente.",
        ),
        ("h1", "Capítulo 4 – Tabela de prazos"),
        (
            p,
            "A tabela a seguir resume os prazos máximos de cada etapa. O prazo de recurso "
            "vale para contestar uma negativa de autorização ou de reembolso e é contado a "
            "partir da data da comunicação da negativa.",
        ),
        ("caption", "Tabela 1 – Prazos máximos"),
        ("table", table, (50, 40, 35, 45)),
        (
            p,
            "Os prazos de reembolso são contados em dias corridos; os de autorização e de "
            "recurso, em dias úteis.",
        ),
    ]
    sidecar: dict[str, Any] = {
        "title": title,
        "valid_from": dt.date(2025, 1, 1) if version == 6 else dt.date(2026, 3, 1),
    }
    if version == 6:
        sidecar["valid_to"] = dt.date(2026, 2, 28)
    sidecar["status"] = "revoked" if version == 6 else "active"
    sidecar["type"] = "manual"
    return ManualSpec(
        doc_id="manual-beneficiario",
        version=f"v{version}",
        sidecar=sidecar,
        running_header=f"Manual do Beneficiário — Plano Saúde Integral — Versão {version}",
        blocks=blocks,
        h1_pt=CHAPTER_PT,
    )


LAWS: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "lgpd.pdf",
        "lgpd",
        "2018",
        {
            "title": "Lei Geral de Proteção de Dados Pessoais (Lei nº 13.709/2018)",
            "valid_from": dt.date(2018, 8, 14),
            "status": "active",
            "type": "law",
        },
    ),
    (
        "cdc.pdf",
        "cdc",
        "1990",
        {
            "title": "Código de Defesa do Consumidor (Lei nº 8.078/1990)",
            "valid_from": dt.date(1990, 9, 11),
            "status": "active",
            "type": "law",
        },
    ),
]


def manual_questions() -> list[dict[str, Any]]:
    """Questions about the two manuals, in the evaluation format of docs/design.md."""
    op, ben = "manual-operacao", "manual-beneficiario"
    return [
        {
            "id": "m01",
            "question": "qual o limite de vibração?",
            "doc_id": op,
            "expected": ["3"],
            "answer_contains": ["4,5"],
            "tags": ["tabela"],
        },
        {
            "id": "m02",
            "question": "De quanto em quanto tempo tenho que medir a vibração da bomba?",
            "doc_id": op,
            "expected": ["2.2"],
            "answer_contains": ["90 dias"],
            "tags": ["leiga"],
        },
        {
            "id": "m03",
            "question": "Qual a frequência da inspeção visual?",
            "doc_id": op,
            "expected": ["2.1"],
            "answer_contains": ["30 dias"],
            "tags": ["direta"],
        },
        {
            "id": "m04",
            "question": "Posso fazer uma inspeção extra, fora da data marcada?",
            "doc_id": op,
            "expected": ["2.3"],
            "answer_contains": ["técnico responsável"],
            "tags": ["leiga"],
        },
        {
            "id": "m05",
            "question": "Qual a temperatura máxima que a bomba pode atingir?",
            "doc_id": op,
            "expected": ["3"],
            "answer_contains": ["85"],
            "tags": ["tabela", "leiga"],
        },
        {
            "id": "m06",
            "question": "O que devo fazer se o ruído passar do limite?",
            "doc_id": op,
            "expected": ["3"],
            "answer_contains": ["Revisar o isolamento"],
            "tags": ["tabela", "leiga"],
        },
        {
            "id": "m07",
            "question": "O que acontece se eu lançar uma medição sem o nome de quem mediu?",
            "doc_id": op,
            "expected": ["4"],
            "answer_contains": ["sistema de auditoria"],
            "tags": ["leiga"],
        },
        {
            "id": "m08",
            "question": "Qual o prazo para autorização de cirurgia eletiva?",
            "doc_id": ben,
            "expected": ["1.1"],
            "not_relevant": ["2.1"],
            "answer_contains": ["21 dias úteis"],
            "tags": ["gemea"],
        },
        {
            "id": "m09",
            "question": "Qual o prazo para receber o reembolso?",
            "doc_id": ben,
            "expected": ["2.1"],
            "not_relevant": ["1.1"],
            "answer_contains": ["30 dias"],
            "tags": ["gemea"],
        },
        {
            "id": "m10",
            "question": "Preciso pedir autorização antes de ir ao pronto-socorro numa emergência?",
            "doc_id": ben,
            "expected": ["3.1"],
            "answer_contains": ["não depende de autorização"],
            "tags": ["leiga"],
        },
        {
            "id": "m11",
            "question": "Que papéis eu tenho que mandar para pedir reembolso?",
            "doc_id": ben,
            "expected": ["2.2"],
            "answer_contains": ["nota fiscal"],
            "tags": ["leiga"],
        },
        {
            "id": "m12",
            "question": "Qual o valor da mensalidade do plano para quem tem mais de 60 anos?",
            "doc_id": ben,
            "expected": [],
            "tags": ["fora_do_escopo"],
        },
    ]


# --------------------------------------------------------------------------- rendering


class ManualPDF(FPDF):
    """A4 page with a running header and a `Página N` footer, both 8pt."""

    def __init__(self, running_header: str) -> None:
        super().__init__(orientation="P", unit="mm", format="A4")
        self.running_header = running_header
        self.add_font(FAMILY, "", str(FONT_REGULAR))
        self.add_font(FAMILY, "B", str(FONT_BOLD))
        self.set_margins(left=20, top=22, right=20)
        self.set_auto_page_break(auto=True, margin=20)

    def header(self) -> None:
        """Draw the running header at the top of every page."""
        self.set_font(FAMILY, "", RUNNING_PT)
        self.set_xy(self.l_margin, 10)
        self.cell(0, 4, self.running_header, align="L")
        self.set_xy(self.l_margin, self.t_margin)

    def footer(self) -> None:
        """Draw `Página N` at the bottom of every page."""
        self.set_y(-14)
        self.set_font(FAMILY, "", RUNNING_PT)
        self.cell(0, 4, f"Página {self.page_no()}", align="C")

    def need(self, height: float) -> None:
        """Start a new page unless `height` mm still fit above the bottom margin."""
        if self.get_y() + height > self.page_break_trigger:
            self.add_page()


def _line(pdf: ManualPDF, text: str, size: int, bold: bool, before: float, after: float) -> None:
    """Write one paragraph-like block in the given font, with vertical spacing."""
    pdf.ln(before)
    pdf.set_font(FAMILY, "B" if bold else "", size)
    pdf.multi_cell(0, size * 0.5, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(after)


def render(spec: ManualSpec) -> bytes:
    """Render a manual to PDF bytes, deterministically."""
    pdf = ManualPDF(spec.running_header)
    pdf.set_creation_date(CREATION_DATE)
    pdf.set_title(spec.sidecar["title"])
    pdf.set_author(spec.sidecar.get("metadata", {}).get("owner", "trecho sample corpus"))
    pdf.set_producer("trecho scripts/make_sample_corpus.py")
    pdf.add_page()
    for i, block in enumerate(spec.blocks):
        kind = block[0]
        if kind == "title":
            _line(pdf, block[1], TITLE_PT, True, 0, 2)
        elif kind == "label":
            _line(pdf, block[1], BODY_PT, False, 0, 3)
        elif kind == "h1":
            pdf.need(keep_with_next(pdf, spec.blocks, i))
            _line(pdf, block[1], spec.h1_pt, True, 4, 1.5)
        elif kind == "h2":
            pdf.need(keep_with_next(pdf, spec.blocks, i))
            _line(pdf, block[1], SUBHEADING_PT, True, 2, 1)
        elif kind == "p":
            _line(pdf, block[1], BODY_PT, False, 0, 2)
        elif kind == "caption":
            nxt = spec.blocks[i + 1] if i + 1 < len(spec.blocks) else ("p",)
            rows = nxt[1] if nxt[0] == "table" else []
            pdf.need(12 + 8 * len(rows))  # keep caption and table on one page
            _line(pdf, block[1], BODY_PT, False, 1, 1)
        elif kind == "table":
            _, rows, widths = block
            pdf.set_font(FAMILY, "", BODY_PT)
            with pdf.table(
                col_widths=widths,
                width=sum(widths),
                align="LEFT",
                text_align="LEFT",
                borders_layout="ALL",
                first_row_as_headings=True,
                line_height=7,
            ) as table:
                for row in rows:
                    cells = table.row()
                    for value in row:
                        cells.cell(value)
            pdf.ln(3)
        else:
            raise ValueError(f"unknown block kind: {kind}")
    return bytes(pdf.output())


def _text_height(pdf: ManualPDF, text: str, size: int, bold: bool) -> float:
    """Height in mm that `text` takes as a multi_cell paragraph in the given font."""
    pdf.set_font(FAMILY, "B" if bold else "", size)
    height = pdf.multi_cell(0, size * 0.5, text, align="L", dry_run=True, output="HEIGHT")
    return float(height)


def keep_with_next(pdf: ManualPDF, blocks: list[Block], i: int) -> float:
    """Space (mm) a heading at `blocks[i]` needs so it is not left alone at a page end.

    A heading keeps its first paragraph; when its section (up to the next heading) holds
    a table, it keeps everything down to the end of that table.
    """
    end = i + 1
    while end < len(blocks) and blocks[end][0] not in ("h1", "h2"):
        end += 1
    tables = [j for j in range(i, end) if blocks[j][0] == "table"]
    last = tables[0] if tables else min(i + 1, end - 1)
    total = 4.0
    for block in blocks[i : last + 1]:
        if block[0] == "table":
            total += 7.5 * len(block[1]) + 3
        elif block[0] in ("h1", "h2"):
            total += _text_height(pdf, block[1], HEADING_PT, True) + 5
        else:
            total += _text_height(pdf, block[1], BODY_PT, False) + 2
    return total


# --------------------------------------------------------------------------- writing


def write_sidecar(path: Path, data: dict[str, Any]) -> None:
    """Write a YAML sidecar with stable key order and readable Unicode."""
    path.write_text(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False),
        encoding="utf-8",
    )


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` to `path` unless identical bytes are already there; True if written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_bytes() == data:
        return False
    path.write_bytes(data)
    return True


def check_fonts() -> None:
    """Fail with a clear message when the DejaVu fonts are missing."""
    missing = [str(p) for p in (FONT_REGULAR, FONT_BOLD) if not p.is_file()]
    if missing:
        sys.exit(
            f"missing font(s): {', '.join(missing)}\n"
            "install them with: apt-get install fonts-dejavu-core"
        )


def copy_laws(lake: Path, laws: Path) -> None:
    """Copy the two law PDFs and the dev questions from the shared corpus, with sidecars."""
    raw = lake / "raw"
    for source_name, doc_id, version, sidecar in LAWS:
        target = raw / doc_id / f"{version}.pdf"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_sidecar(target.with_suffix(".yaml"), sidecar)
        source = laws / source_name
        if source.is_file():
            changed = write_if_changed(target, source.read_bytes())
            print(f"{'copied' if changed else 'same  '}  {source} -> {target}")
        elif target.is_file():
            print(f"kept    {target} ({source} not found, keeping the committed copy)")
        else:
            print(f"MISSING {target}: {source} not found and no committed copy", file=sys.stderr)
    questions = laws / "questions-dev.jsonl"
    target = lake / "eval" / "leis-dev.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    if questions.is_file():
        changed = write_if_changed(target, questions.read_bytes())
        print(f"{'copied' if changed else 'same  '}  {questions} -> {target}")
    elif target.is_file():
        print(f"kept    {target} ({questions} not found, keeping the committed copy)")
    else:
        print(f"MISSING {target}: {questions} not found", file=sys.stderr)


def build(lake: Path, laws: Path) -> None:
    """Write every sample file under `lake`."""
    check_fonts()
    if not laws.is_dir():
        print(f"note: {laws} is absent; the law PDFs already in {lake} are kept as they are")
    specs = [manual_operacao(), manual_beneficiario(6), manual_beneficiario(7)]
    for spec in specs:
        target = lake / "raw" / spec.doc_id / f"{spec.version}.pdf"
        changed = write_if_changed(target, render(spec))
        write_sidecar(target.with_suffix(".yaml"), spec.sidecar)
        print(f"{'wrote ' if changed else 'same  '}  {target}")
    copy_laws(lake, laws)
    questions = lake / "eval" / "manuais.jsonl"
    questions.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q, ensure_ascii=False) for q in manual_questions()]
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote   {questions} ({len(lines)} questions)")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lake",
        type=Path,
        default=REPO_ROOT / "data_lake",
        help="data lake root (default: data_lake/ in the repo)",
    )
    parser.add_argument(
        "--laws",
        type=Path,
        default=REPO_ROOT.parent / "shared" / "corpora" / "leis",
        help="folder with lgpd.pdf, cdc.pdf, questions-dev.jsonl",
    )
    args = parser.parse_args(argv)
    build(args.lake, args.laws)


if __name__ == "__main__":
    main()
