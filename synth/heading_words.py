"""Words of the synthetic report corpus (`headings.py`), one vocabulary per language: section
titles, report prose as sentence templates, table and figure captions, running heads and
the words a distractor is made of. Only vocabularies and number formats live here; which of
them a document uses is drawn in `headings.py`."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Lang:
    """One language's vocabulary."""

    code: str
    contents: tuple[str, ...]  # the title of a table of contents
    page_of: tuple[str, ...]  # footers: `{p}` this page, `{n}` pages
    table_labels: tuple[str, ...]  # the word a table caption starts with
    figure_label: str
    caption_seps: tuple[str, ...]  # between a caption's number and its text
    region_word: str  # a table's first column
    total: str
    change: str  # a table column: change in percent
    titles: tuple[str, ...]  # section titles, short and middling
    long_titles: tuple[str, ...]  # section titles long enough to wrap
    doc_kinds: tuple[str, ...]
    doc_topics: tuple[str, ...]
    orgs: tuple[str, ...]
    regions: tuple[str, ...]
    groups: tuple[str, ...]
    sentences: tuple[str, ...]  # templates: {region} {group} {pct} {pct2} {num} {year} ...
    table_titles: tuple[str, ...]
    figure_titles: tuple[str, ...]
    list_words: tuple[str, ...]  # one-word list items
    banners: tuple[str, ...]  # text turned up the margin
    function_words: frozenset[str]
    decimal: str  # decimal mark
    thousands: str
    pct_space: bool  # "12,4 %" rather than "12,4%"


EN = Lang(
    code="en",
    contents=("Contents", "Table of contents"),
    page_of=("Page {p} of {n}", "{p} / {n}", "- {p} -", "{p}"),
    table_labels=("Table",),
    figure_label="Figure",
    caption_seps=(". ", ": ", " – "),
    region_word="Region",
    total="Total",
    change="Change (%)",
    titles=(
        "Introduction",
        "Background",
        "Methodology",
        "Data sources",
        "Results",
        "Discussion",
        "Recommendations",
        "Conclusions",
        "Scope",
        "Budget execution",
        "Programme overview",
        "Risks and limitations",
        "Next steps",
        "Summary",
        "Sample design",
        "Data collection methods",
        "Response rates",
        "Regional results",
        "Costs",
        "Coverage of target groups",
        "Quality control",
        "Limitations",
        "Main findings",
        "Comparison with earlier rounds",
        "Definitions",
        "Weighting",
        "Staff training",
        "Fieldwork calendar",
        "Performance indicators",
        "Risk management",
    ),
    long_titles=(
        "Detailed results of the household survey by region and age group",
        "Methods of data collection, quality control and treatment of missing values",
        "Comparison with the earlier rounds of the survey and the revisions made since",
        "Budget execution by programme, activity and source of funding in the year",
        "Coverage of the target populations in rural districts and small towns",
    ),
    doc_kinds=("Annual report", "Evaluation report", "Progress report", "Technical note"),
    doc_topics=(
        "Household access programme",
        "Rural water supply",
        "Adult literacy survey",
        "Small business credit line",
        "Primary health care network",
    ),
    orgs=("National Statistics Office", "Ministry of Planning", "Regional Development Agency"),
    regions=("North", "South", "East", "West", "Centre", "Coast"),
    groups=(
        "young people",
        "women",
        "rural households",
        "small firms",
        "older workers",
        "public schools",
    ),
    sentences=(
        "The share of {group} with access to the programme rose from {pct} to {pct2} "
        "between {year} and {year2}.",
        "In the {region} region, the survey reached {num} households, most of them in urban areas.",
        "These figures should be read with care, since the sample in the {region} region "
        "was small.",
        "Data were collected through face-to-face interviews carried out by trained staff.",
        "The response rate reached {pct}, slightly above the level recorded in {year}.",
        "Most of the increase came from {group}, whose participation had been low in "
        "earlier rounds.",
        "Costs per beneficiary fell by {pct} over the period, mainly because of lower "
        "transport costs.",
        "The committee reviewed the results and recommended a follow-up study in {year2}.",
        "Estimates for the {region} region are provisional and will be revised when the "
        "final data arrive.",
        "A further {num} records were excluded because key fields were missing.",
        "The methodology follows the guidelines adopted by the national statistics office.",
        "Differences between regions remain large, as the figures below show.",
        "Overall, the programme met {small} of its {big} targets for the year.",
        "Field teams visited each selected district at least twice before closing the round.",
        "Spending on training reached {num} thousand, well within the approved budget.",
    ),
    table_titles=(
        "Coverage of target populations",
        "Revenue by region",
        "Response rates by region",
        "Households interviewed by year",
        "Costs per beneficiary",
        "Staff trained by region",
    ),
    figure_titles=(
        "Share of households reached by region",
        "Response rate by round",
        "Spending per beneficiary",
    ),
    list_words=(
        "Education",
        "Health",
        "Housing",
        "Transport",
        "Water",
        "Energy",
        "Sanitation",
        "Employment",
    ),
    banners=(
        "Preliminary version - not for citation",
        "For internal use only",
        "Draft for consultation",
    ),
    function_words=frozenset(
        "the of and to in for with a an on by or at from as that which".split()
    ),
    decimal=".",
    thousands=",",
    pct_space=False,
)

PT = Lang(
    code="pt",
    contents=("Sumário", "Índice"),
    page_of=("Página {p} de {n}", "{p} / {n}", "- {p} -", "{p}"),
    table_labels=("Tabela", "Quadro"),
    figure_label="Figura",
    caption_seps=(" – ", ". ", ": "),
    region_word="Região",
    total="Total",
    change="Variação (%)",
    titles=(
        "Introdução",
        "Contexto",
        "Metodologia",
        "Fontes de dados",
        "Resultados",
        "Discussão",
        "Recomendações",
        "Conclusões",
        "Escopo",
        "Execução orçamentária",
        "Visão geral do programa",
        "Riscos e limitações",
        "Próximos passos",
        "Resumo",
        "Desenho da amostra",
        "Métodos de coleta",
        "Taxas de resposta",
        "Resultados regionais",
        "Custos",
        "Cobertura dos públicos-alvo",
        "Controle de qualidade",
        "Limitações",
        "Principais achados",
        "Comparação com rodadas anteriores",
        "Definições",
        "Ponderação",
        "Treinamento das equipes",
        "Calendário do trabalho de campo",
        "Indicadores de desempenho",
        "Gestão de riscos",
    ),
    long_titles=(
        "Resultados detalhados da pesquisa domiciliar por região e faixa etária",
        "Métodos de coleta, controle de qualidade e tratamento de dados ausentes",
        "Comparação com as rodadas anteriores da pesquisa e revisões realizadas",
        "Execução orçamentária por programa, ação e fonte de recursos no exercício",
        "Cobertura dos públicos-alvo em municípios rurais e cidades de pequeno porte",
    ),
    doc_kinds=(
        "Relatório anual",
        "Relatório de avaliação",
        "Relatório de progresso",
        "Nota técnica",
    ),
    doc_topics=(
        "Programa de acesso domiciliar",
        "Abastecimento de água rural",
        "Pesquisa de alfabetização de adultos",
        "Linha de crédito para pequenas empresas",
        "Rede de atenção básica",
    ),
    orgs=("Instituto Nacional de Estatística", "Ministério do Planejamento", "Agência Regional"),
    regions=("Norte", "Nordeste", "Sudeste", "Sul", "Centro-Oeste"),
    groups=(
        "jovens",
        "mulheres",
        "famílias rurais",
        "pequenas empresas",
        "trabalhadores mais velhos",
        "escolas públicas",
    ),
    sentences=(
        "A proporção de {group} com acesso ao programa passou de {pct} para {pct2} entre "
        "{year} e {year2}.",
        "Na região {region}, a pesquisa alcançou {num} domicílios, a maior parte em áreas urbanas.",
        "Esses números devem ser lidos com cautela, pois a amostra da região {region} foi pequena.",
        "Os dados foram coletados por meio de entrevistas presenciais realizadas por equipes "
        "treinadas.",
        "A taxa de resposta chegou a {pct}, pouco acima do nível registrado em {year}.",
        "A maior parte do aumento veio de {group}, cuja participação havia sido baixa nas "
        "rodadas anteriores.",
        "O custo por beneficiário caiu {pct} no período, sobretudo por causa da redução dos "
        "gastos com transporte.",
        "O comitê analisou os resultados e recomendou um estudo de acompanhamento em {year2}.",
        "As estimativas para a região {region} são provisórias e serão revistas quando "
        "chegarem os dados finais.",
        "Outros {num} registros foram excluídos por falta de campos essenciais.",
        "A metodologia segue as orientações adotadas pelo instituto nacional de estatística.",
        "As diferenças entre as regiões continuam grandes, como mostram os números a seguir.",
        "No conjunto, o programa cumpriu {small} das {big} metas previstas para o ano.",
        "As equipes de campo visitaram cada município selecionado pelo menos duas vezes "
        "antes de encerrar a rodada.",
        "Os gastos com treinamento somaram {num} mil reais, dentro do orçamento aprovado.",
    ),
    table_titles=(
        "Receita por região",
        "Cobertura dos públicos-alvo",
        "Taxa de resposta por região",
        "Domicílios entrevistados por ano",
        "Custo por beneficiário",
        "Servidores treinados por região",
    ),
    figure_titles=(
        "Domicílios atendidos por região",
        "Taxa de resposta por rodada",
        "Gasto por beneficiário",
    ),
    list_words=(
        "Educação",
        "Saúde",
        "Habitação",
        "Transporte",
        "Saneamento",
        "Energia",
        "Emprego",
        "Segurança",
    ),
    banners=(
        "Versão preliminar - não citar",
        "Documento de uso interno",
        "Minuta para consulta pública",
    ),
    function_words=frozenset(
        "de da do das dos e a o as os em para com por que na no nas nos um uma ao".split()
    ),
    decimal=",",
    thousands=".",
    pct_space=False,
)

FR = Lang(
    code="fr",
    contents=("Table des matières", "Sommaire"),
    page_of=("Page {p} sur {n}", "{p} / {n}", "- {p} -", "{p}"),
    table_labels=("Tableau",),
    figure_label="Figure",
    caption_seps=(" : ", ". ", " – "),
    region_word="Région",
    total="Total",
    change="Évolution (%)",
    titles=(
        "Introduction",
        "Contexte",
        "Méthodologie",
        "Sources de données",
        "Résultats",
        "Discussion",
        "Recommandations",
        "Conclusions",
        "Champ de l'étude",
        "Exécution budgétaire",
        "Présentation du programme",
        "Risques et limites",
        "Prochaines étapes",
        "Synthèse",
        "Plan de sondage",
        "Méthodes de collecte",
        "Taux de réponse",
        "Résultats régionaux",
        "Coûts",
        "Couverture des publics cibles",
        "Contrôle de la qualité",
        "Limites",
        "Principaux constats",
        "Comparaison avec les vagues précédentes",
        "Définitions",
        "Pondération",
        "Formation des enquêteurs",
        "Calendrier de terrain",
        "Indicateurs de performance",
        "Résultats détaillés du sondage",
    ),
    long_titles=(
        "Résultats détaillés de l'enquête auprès des ménages par région et par âge",
        "Méthodes de collecte, contrôle de la qualité et traitement des valeurs manquantes",
        "Comparaison avec les vagues précédentes de l'enquête et révisions apportées",
        "Exécution budgétaire par programme, action et source de financement",
        "Couverture des publics cibles dans les communes rurales et les petites villes",
    ),
    doc_kinds=("Rapport annuel", "Rapport d'évaluation", "Rapport d'étape", "Note technique"),
    doc_topics=(
        "Programme d'accès des ménages",
        "Approvisionnement en eau rurale",
        "Enquête sur l'alphabétisation des adultes",
        "Ligne de crédit aux petites entreprises",
        "Réseau de soins de santé primaires",
    ),
    orgs=("Institut national de la statistique", "Ministère du Plan", "Agence régionale"),
    regions=("Nord", "Sud", "Est", "Ouest", "Centre"),
    groups=(
        "jeunes",
        "femmes",
        "ménages ruraux",
        "petites entreprises",
        "travailleurs âgés",
        "écoles publiques",
    ),
    sentences=(
        "La part des {group} ayant accès au programme est passée de {pct} à {pct2} entre "
        "{year} et {year2}.",
        "Dans la région {region}, l'enquête a touché {num} ménages, pour la plupart en zone "
        "urbaine.",
        "Ces chiffres doivent être lus avec prudence, car l'échantillon de la région "
        "{region} était réduit.",
        "Les données ont été recueillies lors d'entretiens en face à face menés par des "
        "enquêteurs formés.",
        "Le taux de réponse a atteint {pct}, un niveau légèrement supérieur à celui de {year}.",
        "L'essentiel de la hausse provient des {group}, dont la participation était faible "
        "lors des vagues précédentes.",
        "Le coût par bénéficiaire a baissé de {pct} sur la période, surtout grâce à la "
        "baisse des frais de transport.",
        "Le comité a examiné les résultats et recommandé une étude de suivi en {year2}.",
        "Les estimations pour la région {region} sont provisoires et seront révisées à "
        "réception des données définitives.",
        "Au total, {num} dossiers ont été écartés faute de champs essentiels.",
        "La méthode suit les recommandations de l'institut national de la statistique.",
        "Les écarts entre régions restent importants, comme le montrent les chiffres ci-dessous.",
        "Dans l'ensemble, le programme a atteint {small} de ses {big} objectifs pour l'année.",
        "Les équipes de terrain se sont rendues au moins deux fois dans chaque commune "
        "retenue avant de clore la vague.",
        "Les dépenses de formation ont atteint {num} milliers d'euros, dans les limites du "
        "budget voté.",
    ),
    table_titles=(
        "Couverture des publics cibles",
        "Recettes par région",
        "Taux de réponse par région",
        "Ménages interrogés par année",
        "Coût par bénéficiaire",
        "Agents formés par région",
    ),
    figure_titles=(
        "Part des ménages touchés par région",
        "Taux de réponse par vague",
        "Dépense par bénéficiaire",
    ),
    list_words=(
        "Éducation",
        "Santé",
        "Logement",
        "Transport",
        "Eau",
        "Énergie",
        "Assainissement",
        "Emploi",
    ),
    banners=(
        "Version provisoire - ne pas citer",
        "Document à usage interne",
        "Projet soumis à consultation",
    ),
    function_words=frozenset(
        "de la le les des du et à en pour par sur un une au aux que dans".split()
    ),
    decimal=",",
    thousands=" ",
    pct_space=True,
)

ES = Lang(
    code="es",
    contents=("Índice", "Contenido"),
    page_of=("Página {p} de {n}", "{p} / {n}", "- {p} -", "{p}"),
    table_labels=("Tabla", "Cuadro"),
    figure_label="Gráfico",
    caption_seps=(". ", ": ", " – "),
    region_word="Región",
    total="Total",
    change="Variación (%)",
    titles=(
        "Introducción",
        "Antecedentes",
        "Metodología",
        "Fuentes de datos",
        "Resultados",
        "Discusión",
        "Recomendaciones",
        "Conclusiones",
        "Alcance",
        "Ejecución presupuestaria",
        "Descripción del programa",
        "Riesgos y limitaciones",
        "Próximos pasos",
        "Resumen",
        "Diseño muestral",
        "Métodos de recolección",
        "Tasas de respuesta",
        "Resultados regionales",
        "Costos",
        "Cobertura de la población objetivo",
        "Control de calidad",
        "Limitaciones",
        "Hallazgos principales",
        "Comparación con rondas anteriores",
        "Definiciones",
        "Ponderación",
        "Capacitación del personal",
        "Calendario del trabajo de campo",
        "Indicadores de desempeño",
        "Gestión de riesgos",
    ),
    long_titles=(
        "Resultados detallados de la encuesta de hogares por región y grupo de edad",
        "Métodos de recolección, control de calidad y tratamiento de datos faltantes",
        "Comparación con las rondas anteriores de la encuesta y revisiones realizadas",
        "Ejecución presupuestaria por programa, actividad y fuente de financiamiento",
        "Cobertura de la población objetivo en municipios rurales y ciudades pequeñas",
    ),
    doc_kinds=("Informe anual", "Informe de evaluación", "Informe de avance", "Nota técnica"),
    doc_topics=(
        "Programa de acceso de los hogares",
        "Abastecimiento rural de agua",
        "Encuesta de alfabetización de adultos",
        "Línea de crédito para pequeñas empresas",
        "Red de atención primaria de salud",
    ),
    orgs=("Instituto Nacional de Estadística", "Ministerio de Planificación", "Agencia Regional"),
    regions=("Norte", "Sur", "Centro", "Andina", "Costa"),
    groups=(
        "jóvenes",
        "mujeres",
        "hogares rurales",
        "pequeñas empresas",
        "trabajadores mayores",
        "escuelas públicas",
    ),
    sentences=(
        "La proporción de {group} con acceso al programa pasó del {pct} al {pct2} entre "
        "{year} y {year2}.",
        "En la región {region}, la encuesta llegó a {num} hogares, la mayoría en zonas urbanas.",
        "Estas cifras deben leerse con cautela, ya que la muestra de la región {region} fue "
        "pequeña.",
        "Los datos se recogieron mediante entrevistas presenciales realizadas por personal "
        "capacitado.",
        "La tasa de respuesta alcanzó el {pct}, algo por encima del nivel registrado en {year}.",
        "La mayor parte del aumento provino de {group}, cuya participación había sido baja "
        "en rondas anteriores.",
        "El costo por beneficiario bajó un {pct} en el período, sobre todo por menores "
        "gastos de transporte.",
        "El comité revisó los resultados y recomendó un estudio de seguimiento en {year2}.",
        "Las estimaciones para la región {region} son provisionales y se revisarán cuando "
        "lleguen los datos finales.",
        "Otros {num} registros se excluyeron por falta de campos esenciales.",
        "La metodología sigue las pautas adoptadas por el instituto nacional de estadística.",
        "Las diferencias entre regiones siguen siendo grandes, como muestran las cifras "
        "siguientes.",
        "En conjunto, el programa cumplió {small} de sus {big} metas para el año.",
        "Los equipos de campo visitaron cada municipio seleccionado al menos dos veces antes "
        "de cerrar la ronda.",
        "El gasto en capacitación sumó {num} mil pesos, dentro del presupuesto aprobado.",
    ),
    table_titles=(
        "Cobertura de la población objetivo",
        "Ingresos por región",
        "Tasa de respuesta por región",
        "Hogares entrevistados por año",
        "Costo por beneficiario",
        "Personal capacitado por región",
    ),
    figure_titles=(
        "Hogares alcanzados por región",
        "Tasa de respuesta por ronda",
        "Gasto por beneficiario",
    ),
    list_words=(
        "Educación",
        "Salud",
        "Vivienda",
        "Transporte",
        "Agua",
        "Energía",
        "Saneamiento",
        "Empleo",
    ),
    banners=(
        "Versión preliminar - no citar",
        "Documento de uso interno",
        "Borrador para consulta",
    ),
    function_words=frozenset("de la el los las del y en para por con un una al que a se".split()),
    decimal=",",
    thousands=".",
    pct_space=True,
)

DE = Lang(
    code="de",
    contents=("Inhalt", "Inhaltsverzeichnis"),
    page_of=("Seite {p} von {n}", "{p} / {n}", "- {p} -", "{p}"),
    table_labels=("Tabelle",),
    figure_label="Abbildung",
    caption_seps=(": ", ". ", " – "),
    region_word="Region",
    total="Insgesamt",
    change="Veränderung (%)",
    titles=(
        "Einleitung",
        "Hintergrund",
        "Methodik",
        "Datenquellen",
        "Ergebnisse",
        "Diskussion",
        "Empfehlungen",
        "Schlussfolgerungen",
        "Untersuchungsrahmen",
        "Haushaltsvollzug",
        "Überblick über das Programm",
        "Risiken und Grenzen",
        "Nächste Schritte",
        "Zusammenfassung",
        "Stichprobendesign",
        "Erhebungsmethoden",
        "Rücklaufquoten",
        "Regionale Ergebnisse",
        "Kosten",
        "Erreichung der Zielgruppen",
        "Qualitätskontrolle",
        "Einschränkungen",
        "Wichtigste Befunde",
        "Vergleich mit früheren Runden",
        "Begriffsbestimmungen",
        "Gewichtung",
        "Schulung des Personals",
        "Zeitplan der Feldarbeit",
        "Leistungsindikatoren",
        "Risikomanagement",
    ),
    long_titles=(
        "Ausführliche Ergebnisse der Haushaltsbefragung nach Region und Altersgruppe",
        "Erhebungsmethoden, Qualitätskontrolle und Umgang mit fehlenden Werten",
        "Vergleich mit den früheren Runden der Befragung und vorgenommene Revisionen",
        "Haushaltsvollzug nach Programm, Maßnahme und Finanzierungsquelle im Berichtsjahr",
        "Erreichung der Zielgruppen in ländlichen Gemeinden und kleinen Städten",
    ),
    doc_kinds=("Jahresbericht", "Evaluationsbericht", "Zwischenbericht", "Technische Notiz"),
    doc_topics=(
        "Programm für den Zugang der Haushalte",
        "Ländliche Wasserversorgung",
        "Erhebung zur Grundbildung Erwachsener",
        "Kreditlinie für Kleinbetriebe",
        "Netz der Primärversorgung",
    ),
    orgs=("Statistisches Landesamt", "Ministerium für Planung", "Regionale Entwicklungsagentur"),
    regions=("Nord", "Süd", "Ost", "West", "Mitte"),
    groups=(
        "Jugendlichen",
        "Frauen",
        "ländlichen Haushalte",
        "Kleinbetriebe",
        "älteren Beschäftigten",
        "öffentlichen Schulen",
    ),
    sentences=(
        "Der Anteil der {group} mit Zugang zum Programm stieg zwischen {year} und {year2} "
        "von {pct} auf {pct2}.",
        "In der Region {region} erreichte die Erhebung {num} Haushalte, die meisten davon in "
        "Städten.",
        "Diese Zahlen sind mit Vorsicht zu lesen, da die Stichprobe in der Region {region} "
        "klein war.",
        "Die Daten wurden in persönlichen Interviews durch geschulte Fachkräfte erhoben.",
        "Die Antwortquote lag bei {pct} und damit leicht über dem Wert von {year}.",
        "Der größte Teil des Anstiegs entfiel auf die {group}, deren Beteiligung in früheren "
        "Runden gering war.",
        "Die Kosten je Leistungsempfänger sanken im Zeitraum um {pct}, vor allem wegen "
        "geringerer Transportkosten.",
        "Der Ausschuss prüfte die Ergebnisse und empfahl eine Folgestudie für {year2}.",
        "Die Schätzungen für die Region {region} sind vorläufig und werden mit den "
        "endgültigen Daten überarbeitet.",
        "Weitere {num} Datensätze wurden wegen fehlender Pflichtfelder ausgeschlossen.",
        "Die Methodik folgt den Leitlinien des nationalen Statistikamts.",
        "Die Unterschiede zwischen den Regionen bleiben groß, wie die folgenden Zahlen zeigen.",
        "Insgesamt erreichte das Programm {small} seiner {big} Ziele für das Jahr.",
        "Die Teams besuchten jede ausgewählte Gemeinde mindestens zweimal, bevor die Runde "
        "abgeschlossen wurde.",
        "Die Ausgaben für Schulungen beliefen sich auf {num} Tausend Euro und blieben damit "
        "im Rahmen des Haushalts.",
    ),
    table_titles=(
        "Erreichung der Zielgruppen",
        "Einnahmen nach Region",
        "Antwortquoten nach Region",
        "Befragte Haushalte nach Jahr",
        "Kosten je Leistungsempfänger",
        "Geschultes Personal nach Region",
    ),
    figure_titles=(
        "Erreichte Haushalte nach Region",
        "Antwortquote nach Runde",
        "Ausgaben je Leistungsempfänger",
    ),
    list_words=(
        "Bildung",
        "Gesundheit",
        "Wohnen",
        "Verkehr",
        "Wasser",
        "Energie",
        "Abwasser",
        "Beschäftigung",
    ),
    banners=(
        "Vorläufige Fassung - nicht zitieren",
        "Nur für den internen Gebrauch",
        "Entwurf zur Konsultation",
    ),
    function_words=frozenset(
        "der die das und in von zu mit für auf den dem des ein eine im am zum zur".split()
    ),
    decimal=",",
    thousands=".",
    pct_space=True,
)

LANGS: dict[str, Lang] = {lang.code: lang for lang in (EN, PT, FR, ES, DE)}

# table labels a chunk path may carry, by language (bench/headings.py's judge)
TABLE_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("Table",),
    "pt": ("Tabela", "Quadro"),
    "fr": ("Tableau",),
    "es": ("Tabla", "Cuadro"),
    "de": ("Tabelle",),
    "it": ("Tabella",),
}


def number(lang: Lang, value: float, decimals: int = 0) -> str:
    """A number as the language prints it (`12,345.6` / `12.345,6` / `12 345,6`)."""
    text = f"{value:,.{decimals}f}"  # 12,345.6
    whole, _, frac = text.partition(".")
    whole = whole.replace(",", lang.thousands)
    return whole + (lang.decimal + frac if frac else "")


def percent(lang: Lang, value: float) -> str:
    """A percentage as the language prints it."""
    return number(lang, value, 1) + (" %" if lang.pct_space else "%")


def sentence(lang: Lang, rng: random.Random) -> str:
    """One sentence of report prose, its slots filled."""
    year = rng.randint(2012, 2021)
    big = rng.randint(8, 20)
    slots = {
        "region": rng.choice(lang.regions),
        "group": rng.choice(lang.groups),
        "pct": percent(lang, rng.uniform(3, 60)),
        "pct2": percent(lang, rng.uniform(20, 95)),
        "num": number(lang, rng.randint(120, 48000)),
        "year": str(year),
        "year2": str(year + rng.randint(1, 3)),
        "small": str(rng.randint(3, big - 1)),
        "big": str(big),
    }
    return rng.choice(lang.sentences).format(**slots)


def paragraph(lang: Lang, rng: random.Random, low: int = 2, high: int = 6) -> str:
    """A paragraph of `low` to `high` sentences, no sentence twice in a row."""
    out: list[str] = []
    for _ in range(rng.randint(low, high)):
        s = sentence(lang, rng)
        if out and s.split()[:3] == out[-1].split()[:3]:
            s = sentence(lang, rng)
        out.append(s)
    return " ".join(out)
