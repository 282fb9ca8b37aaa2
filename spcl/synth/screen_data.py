"""Seeded synthetic augmentation corpus for the screen: SCPI / RELATED / NONE in ja, ko and en.

Sentences are assembled from templates and slot lists written for this module (no external data):

- **SCPI**: a specific person (full name, news-style partial name such as ``김모(41)씨`` / ``A씨`` /
  ``田中容疑者``, or first-person family: "my mother") plus a medical, crime, disability or
  creed/ethnicity/orientation fact;
- **RELATED**: the same topics without an identifiable individual (statistics, policy, a disease in
  general, unnamed groups, fictional characters in a plot summary, an investigated company);
- **NONE**, including hard negatives: named people doing neutral things (elections, transfers,
  albums, acting — ``연기`` also means smoke), accidents without injury, civil-only disputes, trains,
  products, movie reviews.

A record is ``{"id", "lang", "source": "synthetic-screen-v1", "text", "label", "categories"}``; the same
``seed`` and sizes give the same records in the same order (``random.Random(seed)`` only).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

SOURCE = "synthetic-screen-v1"


def _words(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


_JA_SURNAMES = _words(
    "佐藤 鈴木 高橋 田中 伊藤 渡辺 山本 中村 小林 加藤 吉田 山田 佐々木 松本 井上 木村 林 清水 "
    "山崎 森 池田 橋本 阿部 石川 "
    "前田 藤田 小川 岡田 後藤 長谷川"
)
_JA_GIVEN = _words("太郎 健一 翔太 大輔 直樹 拓也 誠 浩二 陽子 美咲 由美 恵子 真由美 彩 花子 裕子 愛 明美 和也 隆")
_KO_SURNAMES = _words("김 이 박 최 정 강 조 윤 장 임 한 오 서 신 권 황 안 송 류 홍")
_KO_GIVEN = _words(
    "민수 지훈 서연 지민 현우 수빈 예은 도윤 하은 준호 성민 영희 철수 미경 정훈 은지 상철 혜진 "
    "동현 유나"
)
_EN_FIRST = _words(
    "James Mary John Linda Robert Susan Michael Karen David Emily Daniel "
    "Sarah Thomas Laura Kevin Anna"
)
_EN_LAST = _words(
    "Smith Johnson Williams Brown Jones Miller Davis Wilson Taylor Clark "
    "Walker Hall Young King Wright"
)

# Topic facts per language and category: (SCPI predicate about a person, RELATED general sentence).
_JA = {
    "MEDICAL": {
        "person": [
            "{p}は{d}と診断され、都内の病院に入院した。", "{p}は{d}のため手術を受け、現在も治療を続けている。",
            "{p}は{year}年に{d}で亡くなった。", "{p}は練習中に{inj}を負い、全治{n}か月と診断された。",
            "{p}は長年{d}を患っていたことを明かした。", "{p}は{d}の療養のため活動を休止すると発表した。",
            "私の母は{d}で入院しています。", "父が{d}と診断されてから、家族で介護をしている。",
        ],
        "general": [
            "{d}は早期発見で治療できる病気である。", "厚生労働省によると{d}の患者数は{n}万人に上る。",
            "{d}の症状には発熱や倦怠感などがある。", "病院では{d}の新しい治療法の研究が進められている。",
            "ドラマの主人公は{d}と闘う医師を演じる。", "{d}の予防には生活習慣の改善が重要とされる。",
        ],
    },
    "CRIME": {
        "person": [
            "{p}容疑者は{c}の疑いで逮捕された。", "{p}被告に懲役{n}年の判決が言い渡された。",
            "警察は{c}の容疑で{p}を書類送検した。", "{p}は{year}年に{c}の罪で起訴された。",
            "{p}は{c}事件の被害者として証言した。", "{p}元議員は{c}で有罪判決を受け、服役した。",
            "地検は{p}を{c}の罪で在宅起訴した。", "兄が{c}で逮捕されたと知らされた。",
        ],
        "general": [
            "{c}の認知件数は前年より{n}%減少した。", "警察は{c}への注意を呼びかけている。",
            "{c}を防ぐための法律が改正された。", "小説では{c}事件を追う刑事が描かれる。",
            "地方では{c}の被害が増えているという。", "捜査当局は企業の{c}疑惑について調べている。",
        ],
    },
    "DISABILITY": {
        "person": [
            "{p}は{dis}があり、車椅子で生活している。", "{p}は幼い頃に{dis}と診断された。",
            "{p}は{dis}を抱えながら選手として活躍した。", "私の息子には{dis}がある。",
            "{p}は障害者手帳を取得したことを公表した。",
        ],
        "general": [
            "{dis}のある人への支援制度が拡充された。", "{dis}についての理解を深める講演会が開かれた。",
            "市は障害者雇用の促進に取り組んでいる。", "特別支援学校では{dis}のある子どもが学ぶ。",
        ],
    },
    "OTHER": {
        "person": [
            "{p}は{rel}の信者であることを明かした。", "{p}は自身が同性愛者であるとカミングアウトした。",
            "{p}は在日韓国人として生まれた。", "{p}は{year}年に{rel}に改宗した。",
            "{p}は被差別部落の出身であることを語った。",
        ],
        "general": [
            "{rel}は多くの国で信仰されている宗教である。", "同性婚をめぐる議論が国会で続いている。",
            "人種差別に反対するデモが行われた。", "宗教団体の活動について調査が行われた。",
        ],
    },
}
_JA_SLOTS = {
    "d": _words(
        "がん 肺がん 胃がん 白血病 脳梗塞 心筋梗塞 糖尿病 うつ病 統合失調症 認知症 肺炎 結核 肝炎 "
        "パーキンソン病 乳がん 脳腫瘍 適応障害 難病"
    ),
    "inj": _words("右膝の靭帯損傷 左足首の骨折 肩の脱臼 腰の椎間板ヘルニア 肉離れ"),
    "c": _words(
        "詐欺 窃盗 殺人 傷害 横領 収賄 覚醒剤取締法違反 強盗 暴行 脱税 贈賄 ストーカー規制法違反 "
        "住居侵入 業務上過失致死"
    ),
    "dis": _words("聴覚障害 視覚障害 知的障害 発達障害 自閉症 身体障害 下半身麻痺 ダウン症"),
    "rel": _words("キリスト教 イスラム教 仏教 カトリック 創価学会 ユダヤ教"),
}
_JA_NONE = [
    "{p}は{year}年に東京大学を卒業し、商社に入社した。", "{p}は新しいアルバムを{month}月に発売する。",
    "{p}は次の選挙で市長に立候補すると表明した。", "{p}は{year}年に{team}へ移籍した。",
    "{p}の新作映画が全国で公開された。", "{p}は会見で新会社の設立を発表した。",
    "駅前の再開発事業は{year}年に完了する予定だ。", "この路線は{year}年に開業し、{n}両編成の電車が走る。",
    "トラックが横転する事故があったが、けが人はいなかった。", "両社は契約をめぐる民事訴訟で和解した。",
    "新型スマートフォンは{n}万円で販売される。", "{place}では桜が見頃を迎えている。",
    "{p}監督の作品は海外でも高く評価されている。", "試合は{n}対{m}で{team}が勝利した。",
    "市議会は新しい図書館の建設を可決した。", "この寺は{year}年に建立された。",
    "{p}は{place}の出身で、高校時代は野球部に所属した。", "工場の生産能力は年間{n}万台に達する。",
    "台風の影響で{place}行きの便が欠航した。", "{p}と{q}は{year}年に結婚した。",
]
# Everyday sentences without any person or topic: the bulk of real web text.
_JA_DAILY = [
    "週末は近くの公園を散歩して、カフェでコーヒーを飲んだ。", "このレシピでは砂糖を控えめにしている。",
    "新しいノートパソコンは軽くてバッテリーが長持ちする。", "明日は全国的に晴れて、気温が上がる見込みです。",
    "駅から徒歩五分の場所に新しいパン屋ができた。", "アプリを最新版に更新すると不具合が修正されます。",
    "京都の紅葉は十一月下旬が見頃です。", "この商品は送料無料でお届けします。",
    "図書館の開館時間は午前九時から午後八時までです。", "会議の資料は前日までに共有フォルダに保存してください。",
    "春になると川沿いの桜並木に多くの人が訪れる。", "ホテルの部屋からは海がよく見えた。",
    "このカメラは初心者でも扱いやすい。", "新しい路線バスが来月から運行を始める。",
    "パスタをゆでる時は塩を少し多めに入れるとよい。", "今年の夏は家族でキャンプに行く予定だ。",
    "セール期間中は全品二割引きになります。", "この地域は米と果物の産地として知られている。",
    "プログラミングの基礎を学ぶ講座が始まった。", "スマートフォンの画面が大きくなり、動画が見やすくなった。",
    "美術館では現代アートの展示が開かれている。", "電車の遅延で到着が三十分ほど遅れた。",
    "庭のトマトが赤く色づいてきた。", "新製品の発表会は来週の火曜日に行われる。",
    "この山の登山道は初心者向けで、片道二時間ほどだ。", "雨の日は家で映画を見て過ごすことが多い。",
]
_KO_DAILY = [
    "주말에는 근처 공원을 산책하고 카페에서 커피를 마셨다.", "이 레시피는 설탕을 적게 넣는다.",
    "새 노트북은 가볍고 배터리가 오래간다.", "내일은 전국이 맑고 기온이 오르겠습니다.",
    "역에서 걸어서 5분 거리에 새 빵집이 생겼다.", "앱을 최신 버전으로 업데이트하면 오류가 수정됩니다.",
    "설악산 단풍은 10월 중순이 절정이다.", "이 상품은 무료 배송으로 보내 드립니다.",
    "도서관은 오전 9시부터 오후 8시까지 운영합니다.", "회의 자료는 전날까지 공유 폴더에 올려 주세요.",
    "봄이 되면 강변 벚꽃길에 많은 사람이 찾는다.", "호텔 방에서 바다가 잘 보였다.",
    "이 카메라는 초보자도 쓰기 쉽다.", "새 시내버스 노선이 다음 달부터 운행을 시작한다.",
    "파스타를 삶을 때는 소금을 조금 넉넉히 넣는 것이 좋다.", "올여름에는 가족과 캠핑을 갈 예정이다.",
    "세일 기간에는 전 품목 20% 할인됩니다.", "이 지역은 쌀과 과일 산지로 유명하다.",
    "프로그래밍 기초 강좌가 시작됐다.", "스마트폰 화면이 커져서 동영상 보기가 편해졌다.",
    "미술관에서는 현대미술 전시가 열리고 있다.", "지하철 지연으로 도착이 30분쯤 늦어졌다.",
    "정원의 토마토가 빨갛게 익어 간다.", "신제품 발표회는 다음 주 화요일에 열린다.",
    "이 산의 등산로는 초보자용으로 편도 2시간 정도 걸린다.", "비 오는 날에는 집에서 영화를 보며 지낸다.",
    "배송이 빠르고 포장도 꼼꼼해서 만족합니다.", "이 드라마 OST 너무 좋아요 계속 듣게 됨",
]
_EN_DAILY = [
    "We walked around the park on Sunday and stopped for coffee.", "This recipe uses less sugar than most.",
    "The new laptop is light and the battery lasts all day.", "Tomorrow will be sunny with rising temperatures.",
    "A new bakery opened five minutes from the station.", "Updating the app to the latest version fixes the bug.",
    "The autumn leaves peak in late November.", "Shipping is free on all orders this week.",
    "The library is open from nine in the morning to eight at night.", "Please save the slides to the shared folder.",
    "In spring, crowds gather under the cherry trees by the river.", "Our hotel room had a view of the sea.",
    "This camera is easy to use even for beginners.", "A new bus route starts running next month.",
    "Add plenty of salt when you boil pasta.", "We plan to go camping with the family this summer.",
    "Everything is twenty percent off during the sale.", "The region is known for its rice and fruit.",
    "A beginner course in programming has started.", "Bigger phone screens make videos easier to watch.",
    "The museum is showing an exhibition of modern art.", "The train was delayed by about thirty minutes.",
    "The tomatoes in the garden are turning red.", "The product launch is next Tuesday.",
    "The trail is easy and takes about two hours each way.", "On rainy days we usually stay in and watch movies.",
    "How do I reset my password if I forgot my email?", "The update improves startup time and fixes crashes.",
]

_JA_PLACES = _words("大阪 札幌 福岡 名古屋 京都 仙台 横浜 神戸 広島 那覇")
_JA_TEAMS = _words("読売ジャイアンツ 阪神タイガース 浦和レッズ 鹿島アントラーズ 横浜FC")

_KO = {
    "MEDICAL": {
        "person": [
            "{p}는 {d} 진단을 받고 서울의 한 병원에 입원했다.", "{p}는 {d}으로 수술을 받은 뒤 치료를 이어가고 있다.",
            "{p}는 {year}년 {d}으로 별세했다.", "{p}는 경기 도중 {inj} 부상을 당해 전치 {n}주 진단을 받았다.",
            "{p}는 오랫동안 {d}을 앓아왔다고 고백했다.", "우리 엄마가 {d} 때문에 입원하셨어요.",
            "아버지가 {d} 판정을 받으셔서 간병 중입니다.", "{p}는 {d} 치료를 위해 활동을 중단한다고 밝혔다.",
        ],
        "general": [
            "{d}은 조기에 발견하면 치료할 수 있는 질환이다.", "보건당국에 따르면 {d} 환자는 {n}만명에 이른다.",
            "{d}의 주요 증상은 발열과 피로감이다.", "병원들은 {d} 신약 연구를 진행하고 있다.",
            "드라마 주인공은 {d}과 싸우는 의사를 연기한다.", "{d} 예방을 위해 생활습관 개선이 중요하다.",
        ],
    },
    "CRIME": {
        "person": [
            "경찰은 {c} 혐의로 {p}를 구속했다.", "법원은 {p}에게 징역 {n}년을 선고했다.",
            "검찰은 {c} 혐의로 {p}를 불구속 기소했다.", "{p}는 {year}년 {c} 혐의로 체포됐다.",
            "{p}는 {c} 사건의 피해자로 법정에서 증언했다.", "{p}는 {c} 혐의로 징역형이 확정돼 복역 중이다.",
            "경찰은 {c} 혐의로 {p}를 입건해 조사하고 있다.", "형이 {c} 혐의로 경찰에 붙잡혔다.",
        ],
        "general": [
            "{c} 범죄 발생 건수는 지난해보다 {n}% 줄었다.", "경찰은 {c} 피해 예방을 당부했다.",
            "{c} 처벌을 강화하는 법안이 국회를 통과했다.", "소설은 {c} 사건을 쫓는 형사의 이야기를 그린다.",
            "최근 {c} 피해가 늘고 있는 것으로 나타났다.", "검찰은 해당 기업의 {c} 의혹을 수사하고 있다.",
        ],
    },
    "DISABILITY": {
        "person": [
            "{p}는 {dis}을 가지고 있어 휠체어를 이용한다.", "{p}는 어린 시절 {dis} 진단을 받았다.",
            "{p}는 {dis}을 딛고 국가대표로 활약했다.", "제 아들은 {dis}이 있습니다.",
            "{p}는 장애인 등록을 했다고 밝혔다.",
        ],
        "general": [
            "{dis}이 있는 사람을 위한 지원 제도가 확대됐다.", "{dis}에 대한 인식 개선 교육이 열렸다.",
            "시는 장애인 고용 확대에 나섰다.", "특수학교에서는 {dis}이 있는 학생들이 공부한다.",
        ],
    },
    "OTHER": {
        "person": [
            "{p}는 독실한 {rel} 신자로 알려졌다.", "{p}는 자신이 동성애자라고 커밍아웃했다.",
            "{p}는 탈북민 출신으로 한국에 정착했다.", "{p}는 {year}년 {rel}로 개종했다.",
            "{p}는 조선족 출신이라는 이유로 차별을 받았다고 말했다.",
        ],
        "general": [
            "{rel}는 전 세계에서 믿는 종교다.", "동성혼 법제화를 둘러싼 논쟁이 이어지고 있다.",
            "인종차별에 반대하는 집회가 열렸다.", "종교단체의 활동에 대한 조사가 진행됐다.",
        ],
    },
}
_KO_SLOTS = {
    "d": _words(
        "암 폐암 위암 간암 백혈병 뇌경색 심근경색 당뇨병 우울증 조현병 치매 폐렴 결핵 간염 파킨슨병 "
        "유방암 뇌종양 공황장애"
    ),
    "inj": _words("무릎 인대 발목 골절 어깨 탈구 허리 디스크 햄스트링"),
    "c": _words(
        "사기 절도 살인 상해 횡령 뇌물수수 마약 강도 폭행 탈세 성폭행 스토킹 음주운전 보이스피싱 "
        "업무상과실치사"
    ),
    "dis": _words("청각장애 시각장애 지적장애 발달장애 자폐 지체장애 하반신마비 다운증후군"),
    "rel": _words("기독교 이슬람교 불교 천주교 개신교 원불교"),
}
_KO_NONE = [
    "{p}는 {year}년 서울대를 졸업하고 대기업에 입사했다.", "{p}는 {month}월 새 앨범을 발매한다.",
    "{p}는 다음 선거에서 시장 출마를 선언했다.", "{p}는 {year}년 {team}으로 이적했다.",
    "{p}의 새 영화가 전국 극장에서 개봉했다.", "{p} 대표는 기자회견에서 신사업 계획을 발표했다.",
    "역 주변 재개발 사업은 {year}년 완료될 예정이다.", "이 노선은 {year}년 개통했으며 {n}량 열차가 다닌다.",
    "트럭이 넘어지는 사고가 있었지만 다친 사람은 없었다.", "두 회사는 계약 분쟁 민사소송에서 합의했다.",
    "새 스마트폰은 {n}만원에 판매된다.", "{place}에서는 벚꽃이 한창이다.",
    "{p} 감독의 작품은 해외에서도 높은 평가를 받는다.", "경기는 {team}가 {n}대{m}으로 이겼다.",
    "시의회는 새 도서관 건립안을 통과시켰다.", "{p} 연기 진짜 최고였다 배우들 연기가 다 좋음",
    "{p}는 {place} 출신으로 고교 시절 야구부에서 활동했다.", "공장의 연간 생산 능력은 {n}만대에 이른다.",
    "태풍 영향으로 {place}행 항공편이 결항됐다.", "{p}와 {q}는 {year}년 결혼했다.",
    "산불 연기가 마을까지 번졌지만 인명 피해는 없었다.", "영화 너무 재밌어요 ㅋㅋ 또 보고 싶다",
]
_KO_PLACES = _words("부산 대구 인천 광주 대전 울산 제주 수원 전주 강릉")
_KO_TEAMS = _words("FC서울 전북현대 삼성라이온즈 LG트윈스 울산현대")

_EN = {
    "MEDICAL": {
        "person": [
            "{p} was diagnosed with {d} and admitted to hospital.", "{p} underwent surgery for {d} last week.",
            "{p} died of {d} in {year}.", "{p} suffered a {inj} during training and will miss {n} weeks.",
            "{p} has been treated for {d} for years.", "My mother was diagnosed with {d} last month.",
            "My husband is in hospital recovering from {d}.", "{p} is taking a break to receive treatment for {d}.",
        ],
        "general": [
            "{d} can be treated if it is found early.", "Health officials say {n} thousand people live with {d}.",
            "Common symptoms of {d} include fever and fatigue.", "Researchers are testing a new treatment for {d}.",
            "The series follows a doctor who fights {d}.", "Healthy habits lower the risk of {d}.",
        ],
    },
    "CRIME": {
        "person": [
            "{p} was arrested on suspicion of {c}.", "{p} was sentenced to {n} years in prison.",
            "Prosecutors charged {p} with {c}.", "{p} was convicted of {c} in {year}.",
            "{p} testified as a victim of {c}.", "Police detained {p} for questioning over {c}.",
            "{p}, {n}, pleaded guilty to {c}.", "My brother was arrested for {c} last year.",
        ],
        "general": [
            "Reports of {c} fell by {n} percent last year.", "Police warned residents about {c}.",
            "Lawmakers passed a bill to toughen penalties for {c}.", "The novel follows a detective investigating {c}.",
            "Cases of {c} are rising in rural areas.", "Regulators are investigating the company for {c}.",
        ],
    },
    "DISABILITY": {
        "person": [
            "{p} has {dis} and uses a wheelchair.", "{p} was diagnosed with {dis} as a child.",
            "{p} competed at the Paralympics despite {dis}.", "My son has {dis}.",
            "{p} spoke openly about living with {dis}.",
        ],
        "general": [
            "Support for people with {dis} was expanded.", "The school offers classes for children with {dis}.",
            "The city wants to hire more disabled workers.", "A workshop raised awareness of {dis}.",
        ],
    },
    "OTHER": {
        "person": [
            "{p} is a devout {rel}.", "{p} came out as gay in an interview.",
            "{p} converted to {rel2} in {year}.", "{p} grew up as a refugee and later became a citizen.",
            "{p} said she faced discrimination because of her ethnicity.",
        ],
        "general": [
            "{rel2} is practised in many countries.", "The debate over same-sex marriage continues.",
            "Thousands marched against racial discrimination.", "The survey asked about religious belief.",
        ],
    },
}
_EN_SLOTS = {
    "d": _words(
        "cancer|lung cancer|leukemia|a stroke|a heart attack|diabetes|"
        "depression|schizophrenia|dementia|pneumonia|tuberculosis|hepatitis|"
        "Parkinson's disease|breast cancer|a brain tumor|bipolar disorder",
        "|",
    ),
    "inj": _words("torn ligament|broken ankle|dislocated shoulder|back injury|hamstring strain", "|"),
    "c": _words(
        "fraud|theft|murder|assault|embezzlement|bribery|drug trafficking|"
        "robbery|tax evasion|sexual assault|stalking|drunk driving|manslaughter",
        "|",
    ),
    "dis": _words(
        "a hearing impairment|a visual impairment|an intellectual disability|"
        "autism|cerebral palsy|paralysis|Down syndrome",
        "|",
    ),
    "rel": _words("Christian|Muslim|Buddhist|Catholic|Hindu", "|"),
    "rel2": _words("Islam|Buddhism|Catholicism|Judaism|Hinduism", "|"),
}
_EN_NONE = [
    "{p} graduated in {year} and joined a trading company.", "{p} will release a new album in {month_en}.",
    "{p} announced a run for mayor.", "{p} signed with {team} in {year}.",
    "{p}'s new film opened in theaters nationwide.", "{p} announced plans for a new company.",
    "The station redevelopment will be finished in {year}.", "The line opened in {year} and runs {n}-car trains.",
    "A truck overturned on the highway but no one was hurt.", "The two firms settled their contract dispute.",
    "The new phone will sell for {n} hundred dollars.", "Cherry blossoms are in full bloom in {place}.",
    "Critics praised {p}'s latest film.", "{team} won the match {n} to {m}.",
    "The council approved a new public library.", "The temple was built in {year}.",
    "{p} grew up in {place} and played baseball in high school.", "The plant can build {n} thousand cars a year.",
    "Flights to {place} were cancelled because of the storm.", "{p} and {q} married in {year}.",
]
_EN_PLACES = _words("Boston|Denver|Seattle|Chicago|Austin|Portland|Toronto|Sydney", "|")
_EN_TEAMS = _words("the Red Sox|the Lakers|Arsenal|the Yankees|Chelsea", "|")
_MONTHS_EN = _words("January February March April May June July August September October November December")


def _ja_person(rng: random.Random) -> str:
    s = rng.choice(_JA_SURNAMES)
    style = rng.random()
    if style < 0.5:
        return s + rng.choice(_JA_GIVEN)
    if style < 0.75:
        return f"{s}{rng.choice(_JA_GIVEN)}さん（{rng.randint(18, 85)}）"
    return f"{s}{rng.choice(['さん', '氏', '選手', '元社長', '議員'])}"


def _ko_person(rng: random.Random) -> str:
    s = rng.choice(_KO_SURNAMES)
    style = rng.random()
    if style < 0.35:
        return s + rng.choice(_KO_GIVEN)
    if style < 0.65:
        return f"{s}모({rng.randint(18, 85)})씨"
    if style < 0.8:
        return f"{rng.choice('ABC')}씨({rng.randint(18, 85)})"
    return f"{s}{rng.choice(_KO_GIVEN)} {rng.choice(['씨', '선수', '전 의원', '대표', '배우'])}"


def _en_person(rng: random.Random) -> str:
    name = f"{rng.choice(_EN_FIRST)} {rng.choice(_EN_LAST)}"
    return rng.choice([name, name, f"Mr. {rng.choice(_EN_LAST)}", f"{name}, {rng.randint(18, 85)},"])


_TABLES: dict[str, tuple[Any, ...]] = {
    "ja": (_JA, _JA_SLOTS, _JA_NONE, _ja_person, _JA_PLACES, _JA_TEAMS, _JA_DAILY),
    "ko": (_KO, _KO_SLOTS, _KO_NONE, _ko_person, _KO_PLACES, _KO_TEAMS, _KO_DAILY),
    "en": (_EN, _EN_SLOTS, _EN_NONE, _en_person, _EN_PLACES, _EN_TEAMS, _EN_DAILY),
}


def _fill(template: str, lang: str, rng: random.Random) -> str:
    _, slots, _, person, places, teams, _ = _TABLES[lang]
    values = {k: rng.choice(v) for k, v in slots.items()}
    values.update(
        p=person(rng),
        q=person(rng),
        year=rng.randint(1950, 2024),
        month=rng.randint(1, 12),
        month_en=rng.choice(_MONTHS_EN),
        n=rng.randint(2, 30),
        m=rng.randint(0, 9),
        place=rng.choice(places),
        team=rng.choice(teams),
    )
    return template.format(**values)


def _neutral(lang: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(_TABLES[lang][6])
    return _fill(rng.choice(_TABLES[lang][2]), lang, rng)


def generate(n_per_label: int = 300, seed: int = 0, langs: Sequence[str] = ("ja", "ko", "en")) -> list[dict[str, Any]]:
    """Generate ``n_per_label`` SCPI, RELATED and NONE records per language (NONE twice as many).

    About 40 % of the documents surround the key sentence with one to six neutral sentences, so the
    topic also has to be found inside longer text (and long neutral text is not a topic).

    >>> recs = generate(2, seed=1, langs=("en",))
    >>> sorted({r["label"] for r in recs}), recs == generate(2, seed=1, langs=("en",))
    (['NONE', 'RELATED', 'SCPI'], True)
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    joiner = {"ja": "", "ko": " ", "en": " "}
    for lang in langs:
        topics = _TABLES[lang][0]
        cats = list(topics)
        plan = [("SCPI", n_per_label), ("RELATED", n_per_label), ("NONE", 2 * n_per_label)]
        for label, count in plan:
            for i in range(count):
                if label == "NONE":
                    key, categories = _neutral(lang, rng), []
                else:
                    # Weighted towards the categories real data holds most (CRIME, MEDICAL).
                    cat = rng.choices(cats, weights=[3, 4, 1, 1])[0]
                    kind = "person" if label == "SCPI" else "general"
                    key, categories = _fill(rng.choice(topics[cat][kind]), lang, rng), [cat]
                parts = [key]
                if rng.random() < 0.4:
                    for _ in range(rng.randint(1, 6)):
                        parts.insert(rng.randint(0, len(parts)), _neutral(lang, rng))
                out.append(
                    {
                        "id": f"synth-{lang}-{label.lower()}-{i:05d}",
                        "lang": lang,
                        "source": SOURCE,
                        "text": joiner[lang].join(parts),
                        "label": label,
                        "categories": categories,
                    }
                )
    return out
